import Foundation
@testable import ParleyTransfer
import XCTest

/// The import's attachments come out of the document into files; everything else is the same JSON.
final class ImportSplitterTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("splitter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func split(_ document: String, pieceSize: Int = 7, maxFileBytes: Int = 1 << 20) throws -> ImportSplitter {
        let splitter = ImportSplitter(directory: directory, maxFileBytes: maxFileBytes)
        let parser = JSONEventParser(maxDepth: 16) { try splitter.take($0) }
        let bytes = Array(document.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            try bytes[offset..<end].withUnsafeBytes { try parser.feed($0) }
            offset = end
        }
        try parser.finish()
        return splitter
    }

    func testAttachmentsOfBothShapesBecomeFilesAndTheRestIsUnchanged() throws {
        let one = Data("first file".utf8).base64EncodedString()
        let two = Data([0, 255, 10, 13]).base64EncodedString()
        let document = #"{"parley_export":1,"conversations":[{"title":"a \"q\" ☃","files":[{"id":"f1","data":"\#(one)"}],"#
            + #""messages":[{"content":"data","n":-1.5e2,"ok":true,"x":null}]},{"files":[{"data":"\#(two)"}],"data":"kept"}]}"#
        let splitter = try split(document)
        XCTAssertEqual(splitter.files.count, 2)
        XCTAssertEqual(try Data(contentsOf: splitter.files[0]), Data("first file".utf8))
        XCTAssertEqual(try Data(contentsOf: splitter.files[1]), Data([0, 255, 10, 13]))
        XCTAssertEqual(splitter.fileBytes, 14)
        let expected = #"{"parley_export":1,"conversations":[{"title":"a \"q\" ☃","files":[{"id":"f1","data":"@0"}],"#
            + #""messages":[{"content":"data","n":-1.5e2,"ok":true,"x":null}]},{"files":[{"data":"@1"}],"data":"kept"}]}"#
        XCTAssertEqual(String(decoding: splitter.text, as: UTF8.self), expected)

        let single = try split(#"{"parley_export":1,"files":[{"data":"\#(one)"}],"messages":[]}"#)
        XCTAssertEqual(single.files.count, 1)
        XCTAssertEqual(String(decoding: single.text, as: UTF8.self), #"{"parley_export":1,"files":[{"data":"@0"}],"messages":[]}"#)
    }

    func testBadBase64AndTooManyBytesAreRefusedNamingThePlace() {
        XCTAssertThrowsError(try split(#"{"conversations":[{},{"files":[{"data":"@@not base64"}]}]}"#)) { error in
            XCTAssertEqual(error as? ImportSplitter.Failure, .notBase64(place: "conversations[1].files[0].data"))
        }
        let big = Data(repeating: 7, count: 2000).base64EncodedString()
        XCTAssertThrowsError(try split(#"{"files":[{"data":"\#(big)"}]}"#, maxFileBytes: 1000)) { error in
            XCTAssertEqual(error as? ImportSplitter.Failure, .filesTooLarge(1000))
        }
    }
}
