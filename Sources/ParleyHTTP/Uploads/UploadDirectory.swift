import Foundation

/// The folder upload bodies are written to (`HTTPServerConfiguration.uploadDirectory`). Prepared by
/// `HTTPServer.start()`: created if missing and cleared of the temp files a previous run left (a crash
/// or a kill skips the per-upload cleanup). Only files named `parley-upload-*` are ever deleted, so a
/// directory set by mistake to one holding other files loses none of them.
struct UploadDirectory: Sendable {
    static let filePrefix = "parley-upload-"

    let path: String
    /// Made with mkdtemp because none was configured: removed with its files at shutdown.
    let isPrivate: Bool

    /// Creates (0700) or clears the configured folder; with none, makes a private one in the system's
    /// temp folder.
    static func prepare(_ configured: String?) throws(HTTPServerError) -> UploadDirectory {
        guard let configured else {
            var template = Array((NSTemporaryDirectory() + "/parley-uploads-XXXXXX").utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap(mkdtemp) }) else {
                throw .uploadDirectoryUnusable(path: NSTemporaryDirectory(), reason: String(cString: strerror(errno)))
            }
            return UploadDirectory(path: String(cString: made), isPrivate: true)
        }
        do {
            try FileManager.default.createDirectory(
                atPath: configured, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .uploadDirectoryUnusable(path: configured, reason: "\(error)")
        }
        let directory = UploadDirectory(path: configured, isPrivate: false)
        directory.removeLeftovers()
        return directory
    }

    /// A new empty file only this process can read: 0600, O_EXCL under a random name (what mkostemp
    /// does, which Swift's Glibc does not export), close-on-exec so worker children never inherit it.
    /// nil with errno set when it cannot be made.
    func makeFile() -> (fd: Int32, url: URL)? {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<8 {
            let name = path + "/" + Self.filePrefix + String(generator.next() as UInt64, radix: 36)
            let fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (fd, URL(fileURLWithPath: name)) }
            if errno != EEXIST { return nil }
        }
        return nil
    }

    /// Deletes the temp files of earlier runs (and of this one, at shutdown).
    func removeLeftovers() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where name.hasPrefix(Self.filePrefix) {
            unlink(path + "/" + name)
        }
    }

    /// At shutdown: a private folder goes with its files; a configured one keeps only what was not ours.
    func close() {
        removeLeftovers()
        if isPrivate { rmdir(path) }
    }
}
