import Foundation
@testable import ParleyStore
import XCTest

/// A 20 MB file goes in and out in chunks: never one allocation of its size.
final class FileMemoryTests: FileTestCase {
    static let size = 20 * 1024 * 1024

    /// Written to disk a chunk at a time, so the test itself holds no copy either.
    func largeFile() throws -> URL {
        let url = directory.appendingPathComponent("large.bin")
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let chunk = Data(pattern(1024 * 1024))
        for _ in 0..<(Self.size / chunk.count) { try handle.write(contentsOf: chunk) }
        return url
    }

    func testA20MBFileIsReadBackInChunksOfTheChunkSize() throws {
        let store = try makeStore()
        let file = try store.saveFile(metadata(), content: largeFile(), thumbnail: nil, text: nil)
        XCTAssertEqual(file.bytes, Int64(Self.size))
        var reader = try store.fileContent(id: file.id, ownedBy: "alice")
        var chunks = 0
        var total = 0
        let expected = pattern(1024 * 1024)
        while let chunk = try reader.next() {
            XCTAssertLessThanOrEqual(chunk.count, FileContentReader.defaultChunkSize)
            let offset = total % expected.count
            XCTAssertEqual(chunk, Array(expected[offset..<offset + chunk.count]), "chunk \(chunks)")
            total += chunk.count
            chunks += 1
        }
        XCTAssertEqual(total, Self.size)
        XCTAssertEqual(chunks, Self.size / FileContentReader.defaultChunkSize)
    }

    /// The peak resident size while saving and reading 20 MB rises by far less than 20 MB. Linux resets
    /// the peak (`VmHWM`) when 5 is written to /proc/self/clear_refs; elsewhere the test is skipped.
    func testSavingAndReading20MBDoesNotHoldItWhole() throws {
        let store = try makeStore()
        let url = try largeFile()
        _ = try save(store, upload: "warm-up", count: 300_000)  // connections and caches exist before measuring
        guard let baseline = resetPeakResidentBytes() else { throw XCTSkip("no /proc/self/clear_refs here") }
        let file = try store.saveFile(metadata(upload: "large"), content: url, thumbnail: nil, text: nil)
        var reader = try store.fileContent(id: file.id, ownedBy: "alice")
        var total = 0
        while let chunk = try reader.next() { total += chunk.count }
        XCTAssertEqual(total, Self.size)
        let peak = try XCTUnwrap(Self.status("VmHWM"))
        XCTAssertLessThan(peak - baseline, 12 * 1024 * 1024,
                          "peak \(peak / 1024) KiB against \(baseline / 1024) KiB before: the file was held whole")
    }

    /// Resets the peak resident size; returns the resident size now, or nil when the kernel cannot.
    private func resetPeakResidentBytes() -> Int? {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return nil }
        defer { try? handle.close() }
        guard (try? handle.write(contentsOf: Data("5".utf8))) != nil else { return nil }
        return Self.status("VmRSS")
    }

    /// A `kB` field of /proc/self/status, in bytes.
    private static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.split(separator: " ").dropFirst().first { Int($0) != nil }
            return number.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
