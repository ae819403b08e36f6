import CMicroHTTPD
import Foundation

/// One upload's body on its way to disk: raw pieces, or multipart parts from libmicrohttpd's post
/// processor, written with write(2) on the HTTP worker thread as they arrive (no task per piece, no
/// copy in memory). It decides the upload's fate: a file for the handler, or the error answered once
/// the body has been read (0.9.75 cannot answer mid-body).
///
/// Thread-safety: touched only from the access handler and NOTIFY_COMPLETED, which libmicrohttpd calls
/// for one connection on one thread at a time. The post processor calls back into it synchronously.
final class UploadReceiver {
    /// What the end of the body leads to.
    enum Outcome {
        /// The file is complete; the lease passes to the handler's task, which ends it.
        case accepted(UploadedBody, UploadLease)
        case refused(HTTPError)
    }

    let route: UploadRoute
    /// The request as the handler sees it (empty body).
    let request: HTTPRequest
    /// Body bytes allowed (the file plus multipart framing); past it the upload is refused with 413.
    private let bodyLimit: Int
    /// Bytes read and dropped after `bodyLimit` before the connection is closed instead.
    private let discardLimit: Int
    private var lease: UploadLease?
    private var fd: Int32
    private var processor: OpaquePointer?
    private var received = 0
    private var fileBytes = 0
    private var failure: HTTPError?
    private var filename: String?
    private var contentType: String?
    /// Multipart: `file` parts seen, and the part the last callback belonged to.
    private var fileParts = 0
    private var currentPart: (isFile: Bool, end: UInt64)?
    /// Sees each piece of the file once it is written (the route's `UploadInspector`).
    private let inspector: (any UploadInspector)?

    /// nil when `multipart` and the post processor refuses the request's Content-Type (no boundary);
    /// the lease is then ended.
    init?(route: UploadRoute, request: HTTPRequest, lease: UploadLease, fd: Int32, multipart: OpaquePointer?,
          discardLimit: Int) {
        self.route = route
        self.request = request
        self.lease = lease
        self.fd = fd
        self.discardLimit = discardLimit
        bodyLimit = route.maxBytes + (multipart == nil ? 0 : UploadRoute.multipartAllowance)
        inspector = route.inspector?()
        guard let connection = multipart else {
            filename = request.query["filename"]
            contentType = request.header("content-type")
            return
        }
        // Each part's data arrives in pieces of at most this buffer; a part's header line must fit in it.
        // Unretained: the processor is destroyed before this receiver goes (`finish`, `abandon`).
        processor = MHD_create_post_processor(
            connection, 32 * 1024, uploadPartReceived, Unmanaged.passUnretained(self).toOpaque())
        guard processor != nil else {
            dropFile()
            return nil
        }
    }

    deinit {
        abandon()
    }

    // MARK: - Receiving

    /// One piece of the body; false when the connection must close (past the discard limit).
    func receive(_ bytes: UnsafePointer<CChar>, count: Int) -> Bool {
        received += count
        if received > bodyLimit {
            fail(.payloadTooLarge)
            return received - bodyLimit <= discardLimit
        }
        guard failure == nil else { return true }
        guard let processor else {
            fileBytes += count
            write(bytes, count: count)
            return true
        }
        if MHD_post_process(processor, bytes, count) != MHD_Result.YES { fail(.invalidMultipart) }
        return true
    }

    /// A callback of the post processor: a piece of one part's value. False stops the processor.
    fileprivate func part(
        key: UnsafePointer<CChar>?, filename: UnsafePointer<CChar>?, contentType: UnsafePointer<CChar>?,
        data: UnsafePointer<CChar>?, offset: UInt64, size: Int
    ) -> Bool {
        guard failure == nil else { return false }
        let isFile = key.map { strcmp($0, "file") == 0 } ?? false
        // A part's first callback has offset 0, and so may its second when the first was empty: only a
        // part of another kind, or offset 0 after data, starts a new part. (So a second `file` part
        // right after an empty first one is taken for the same part: harmless, it holds the bytes.)
        let startsPart = offset == 0 && (currentPart.map { $0.end > 0 || $0.isFile != isFile } ?? true)
        currentPart = (isFile, offset + UInt64(size))
        guard isFile else { return true }
        if startsPart {
            fileParts += 1
            guard fileParts == 1 else {
                fail(.multipleFiles)
                return false
            }
            self.filename = filename.map { String(cString: $0) }
            self.contentType = contentType.map { String(cString: $0) }
        }
        guard size > 0, let data else { return true }
        fileBytes += size
        guard fileBytes <= route.maxBytes else {
            fail(.payloadTooLarge)
            return false
        }
        write(data, count: size)
        return failure == nil
    }

    private func write(_ bytes: UnsafePointer<CChar>, count: Int) {
        var offset = 0
        while offset < count {
            let written = Glibc.write(fd, bytes + offset, count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                let error = errno
                if error != ENOSPC && error != EDQUOT {
                    ServerCore.log("upload write failed: \(String(cString: strerror(error)))")
                }
                fail(error == ENOSPC || error == EDQUOT ? .insufficientStorage : .internal)
                return
            }
            offset += written
        }
        inspector?.inspect(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    // MARK: - Ending

    /// The body has ended: the file for the handler, or the error to answer.
    func finish() -> Outcome {
        if let processor {
            self.processor = nil
            let complete = MHD_destroy_post_processor(processor) == MHD_Result.YES
            if failure == nil && !complete { fail(.invalidMultipart) }
            if failure == nil && fileParts == 0 { fail(.missingFile) }
        }
        if let failure { return .refused(failure) }
        guard let lease else { return .refused(.internal) }
        self.lease = nil
        let closed = Glibc.close(fd)
        fd = -1
        guard closed == 0 else {
            lease.end()
            return .refused(.internal)
        }
        let body = UploadedBody(file: lease.file, filename: filename, contentType: contentType, byteCount: fileBytes,
                                inspection: inspector?.finish())
        return .accepted(body, lease)
    }

    /// The client left mid-body (or the server is stopping): everything goes. Idempotent.
    func abandon() {
        if let processor {
            self.processor = nil
            _ = MHD_destroy_post_processor(processor)
        }
        dropFile()
    }

    /// The upload is refused: the rest of the body is only counted, the file goes now.
    private func fail(_ error: HTTPError) {
        if failure == nil { failure = error }
        dropFile()
    }

    private func dropFile() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
        lease?.end()
        lease = nil
    }
}

/// MHD_PostDataIterator: `cls` is the receiver that owns the post processor.
private func uploadPartReceived(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
    _ filename: UnsafePointer<CChar>?, _ contentType: UnsafePointer<CChar>?,
    _ transferEncoding: UnsafePointer<CChar>?, _ data: UnsafePointer<CChar>?, _ offset: UInt64, _ size: Int
) -> MHD_Result {
    guard let cls else { return MHD_Result.NO }
    let upload = Unmanaged<UploadReceiver>.fromOpaque(cls).takeUnretainedValue()
    return upload.part(key: key, filename: filename, contentType: contentType, data: data, offset: offset, size: size)
        ? MHD_Result.YES : MHD_Result.NO
}
