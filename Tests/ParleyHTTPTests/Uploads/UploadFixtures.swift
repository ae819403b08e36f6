import Foundation
import ParleyHTTP
import ParleyTestSupport
import Synchronization
import XCTest

/// multipart/form-data framed the way curl frames `-F file=@x`: a boundary of dashes and hex, each
/// part's Content-Disposition and Content-Type, CRLF line ends.
struct Multipart {
    struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var bytes: [UInt8]
    }

    var boundary = "------------------------" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The part's headers and the blank line after them.
    func head(_ part: Part) -> [UInt8] {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
        if let filename = part.filename { text += "; filename=\"\(filename)\"" }
        text += "\r\n"
        if let type = part.contentType { text += "Content-Type: \(type)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// What ends a part's value and the whole body.
    var tail: [UInt8] { Array("\r\n--\(boundary)--\r\n".utf8) }

    func body(_ parts: [Part]) -> [UInt8] {
        var body: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index > 0 { body += Array("\r\n".utf8) }
            body += head(part) + part.bytes
        }
        return body + tail
    }

    /// A body whose only part is `file`.
    func file(_ bytes: [UInt8], filename: String = "upload.bin", type: String = "application/octet-stream") -> [UInt8] {
        body([Part(name: "file", filename: filename, contentType: type, bytes: bytes)])
    }
}

/// What the test upload route saw: every call's body and the file as it was on disk then (its bytes,
/// or with `keepBytes` false only its checksum, read in pieces so the recorder holds no copy).
final class UploadRecorder: Sendable {
    struct Call: Sendable {
        var body: UploadedBody
        var bytes: [UInt8]
        var checksum: UInt64
        var fileExisted: Bool
    }

    private let keepBytes: Bool
    private let calls = Mutex<[Call]>([])

    init(keepBytes: Bool = true) {
        self.keepBytes = keepBytes
    }

    func record(_ request: HTTPRequest, _ body: UploadedBody) {
        var call = Call(body: body, bytes: [], checksum: 0, fileExisted: false)
        if let handle = FileHandle(forReadingAtPath: body.file.path) {
            call.fileExisted = true
            var checksum = Checksum()
            while let piece = try? handle.read(upToCount: 64 * 1024), !piece.isEmpty {
                checksum.add(piece)
                if keepBytes { call.bytes += piece }
            }
            try? handle.close()
            call.checksum = checksum.value
        }
        calls.withLock { $0.append(call) }
    }

    var all: [Call] { calls.withLock { $0 } }
    var last: Call? { all.last }
}

/// FNV-1a over bytes fed in pieces: compares a file with bytes that were never held whole.
struct Checksum {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { add($0) }
    }

    mutating func add(_ bytes: Data) {
        bytes.withUnsafeBytes { add($0) }
    }

    private mutating func add(_ bytes: UnsafeRawBufferPointer) {
        var value = self.value
        for byte in bytes {
            value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        self.value = value
    }
}

/// The highest resident size seen, sampled every 2 ms on a thread of its own until `stop()`.
final class PeakSampler: Sendable {
    private let state = Mutex((peak: 0, running: true))
    private let done = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while state.withLock({ $0.running }) {
                let now = residentBytes()
                state.withLock { $0.peak = max($0.peak, now) }
                usleep(2_000)
            }
            done.signal()
        }
        thread.start()
    }

    func stop() -> Int {
        state.withLock { $0.running = false }
        done.wait()
        let now = residentBytes()
        return state.withLock { max($0.peak, now) }
    }
}

/// A fresh folder for one test's upload files, removed by the teardown.
func makeUploadFolder(_ testCase: XCTestCase) -> String {
    let path = NSTemporaryDirectory() + "/parley-upload-test-\(UUID().uuidString)"
    testCase.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
}

/// The upload files in `folder` now.
func uploadFiles(in folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("parley-upload-") }
}

/// A server with `POST /api/upload` (an upload route recording into `recorder`, answering 201 with the
/// byte count) and `POST /api/echo` (a normal in-memory route), uploads written to `folder`.
func startUploadServer(
    _ testCase: XCTestCase, folder: String, maxBytes: Int, recorder: UploadRecorder,
    admit: @escaping UploadRoute.Admit = { _ in nil },
    configure: (inout HTTPServerConfiguration) -> Void = { _ in }
) throws -> (server: HTTPServer, base: String) {
    try startServer(testCase, configure: { configuration in
        configuration.uploadDirectory = folder
        configure(&configuration)
    }, routes: { router in
        router.on("POST", "/api/upload", upload: UploadRoute(maxBytes: maxBytes, admit: admit) { request, body in
            recorder.record(request, body)
            return .text("\(body.byteCount)", status: 201)
        })
        router.on("POST", "/api/echo") { request in
            HTTPResponse(status: 200, body: .bytes(request.body))
        }
    })
}

/// Request head for a raw connection.
func uploadHead(_ path: String = "/api/upload", contentType: String, length: Int?) -> String {
    var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: \(contentType)\r\n"
    head += length.map { "Content-Length: \($0)\r\n" } ?? "Transfer-Encoding: chunked\r\n"
    return head + "\r\n"
}

/// Random bytes from a seeded generator, a word at a time (a byte loop is slow in debug builds).
func randomBytes(_ count: Int, _ generator: inout SplitMix64) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { raw in
        var index = 0
        while index < count {
            let word = generator.next()
            if count - index >= 8 {
                raw.storeBytes(of: word.littleEndian, toByteOffset: index, as: UInt64.self)
                index += 8
            } else {
                for shift in 0..<(count - index) { raw[index + shift] = UInt8(truncatingIfNeeded: word >> (8 * shift)) }
                index = count
            }
        }
    }
    return bytes
}

/// This process's resident memory in bytes (/proc/self/statm's second field × the page size).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * sysconf(Int32(_SC_PAGESIZE))
}
