/// Sees an upload's file bytes as they are written to its temp file, on the HTTP worker thread, so
/// work that must read every byte anyway (a hash, a UTF-8 check) is done while the body arrives
/// instead of by reading the whole file again once it is on disk. `UploadRoute.inspector` makes one
/// per upload.
///
/// Not thread-safe, and need not be: one upload's bytes arrive on one thread at a time (see
/// `UploadReceiver`). `finish` is called once, after the last byte of an accepted upload, and its
/// result reaches the handler as `UploadedBody.inspection`. Keep `inspect` quick: it runs between
/// two reads of the socket.
public protocol UploadInspector: AnyObject {
    /// The file's next bytes, in order: only the file (a multipart body's framing is not seen).
    func inspect(_ bytes: UnsafeRawBufferPointer)
    /// The file is complete: what the handler is given about it.
    func finish() -> any Sendable
}
