import Foundation
import ParleyMedia

/// The check a text document gets (the sniffer found UTF-8 at its start): every byte UTF-8, and a
/// `.json` file must parse. It runs in the server's process, off the cooperative pool (`Blocking`):
/// the standard library's UTF-8 check and yajl cannot be made to crash or hang by a file, so a text
/// document needs no `parley-media-worker` child (images and PDFs still do). The same refusals as the
/// worker's: `MediaError.notUTF8`, `.invalidJSON`.
enum TextCheck {
    /// Bytes read at a time from the file.
    static let chunkSize = 256 * 1024

    /// The document's Unicode scalar count. `inspection` (the bytes as they arrived) spares the UTF-8
    /// pass over the file; a JSON document is read once for its parse either way.
    static func check(_ file: URL, mediaType: String, inspection: UploadInspection?) throws(MediaError) -> Int {
        let json = mediaType == "application/json" ? JSONCheck() : nil
        if let inspection {
            guard let scalars = inspection.utf8Scalars else { throw .notUTF8 }
            if let json { try read(file) { json.add($0) } }
            if let failure = json?.finish() { throw .invalidJSON(failure) }
            return scalars
        }
        var text = UTF8Scan()
        try read(file) { bytes in
            text.add(bytes)
            json?.add(bytes)
        }
        guard let scalars = text.finish() else { throw .notUTF8 }
        if let failure = json?.finish() { throw .invalidJSON(failure) }
        return scalars
    }

    /// Calls `body` with each chunk of the file, in order.
    private static func read(_ file: URL, _ body: (UnsafeRawBufferPointer) -> Void) throws(MediaError) {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable("cannot open the text file") }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable("cannot read the text file") }
            if count == 0 { return }
            body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }
}
