import CSQLite
import Foundation

/// A local file (an upload's processed bytes, a document's text) read with POSIX calls into the
/// caller's buffer, so copying it into a blob holds one chunk, never the file.
///
/// Not thread-safe; closes its descriptor when released.
final class LocalFileReader {
    private let descriptor: Int32
    private let path: String
    /// The file's size when opened: what is copied.
    let size: Int64

    init(_ url: URL) throws(StoreError) {
        path = url.path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.failure("cannot open", path) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = Self.failure("cannot read the size of", path)
            close(descriptor)
            throw error
        }
        size = Int64(status.st_size)
    }

    deinit {
        close(descriptor)
    }

    /// Fills `buffer` from the file's current position, retrying short reads; returns the bytes read
    /// (fewer than `buffer.count` only at the end of the file).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(StoreError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let count = Foundation.read(descriptor, base + filled, buffer.count - filled)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw Self.failure("cannot read", path) }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// Copies the whole file into `blob` (sized `size`) in chunks of `buffer.count` bytes.
    func copy(into blob: IncrementalBlob, using buffer: UnsafeMutableRawBufferPointer) throws(StoreError) {
        var offset = 0
        while offset < blob.count {
            let wanted = min(buffer.count, blob.count - offset)
            let read = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
            guard read == wanted else {
                throw StoreError.sqlite(code: SQLITE_IOERR, message: "\(path) shrank while it was stored")
            }
            try blob.write(UnsafeRawBufferPointer(rebasing: buffer[0..<wanted]), at: offset)
            offset += wanted
        }
    }

    private static func failure(_ what: String, _ path: String) -> StoreError {
        .sqlite(code: SQLITE_IOERR, message: "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
