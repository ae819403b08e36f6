import Foundation
@testable import ParleyGeneration
import ParleyProviders
import ParleyStore
import Synchronization
import XCTest

/// Files in the context budget: a document counts its wrapped text, an image a fixed estimate; the
/// newest turns win; whatever file is left out is named in a note at the start of the first user
/// turn sent; files of turns not sent are never loaded.
final class ContextBuilderFilesTests: XCTestCase {
    /// Files by message id, and which messages had their files loaded.
    private final class Files: AttachmentSource {
        let files: [String: [ChatAttachment]]
        let loads = Mutex<[String]>([])

        init(_ files: [String: [ChatAttachment]]) { self.files = files }

        func attachments(for message: Message) throws -> [ChatAttachment] {
            loads.withLock { $0.append(message.id) }
            return files[message.id] ?? []
        }

        /// Summaries without loading (as the store's source gives them from the message's parts).
        func summaries(for message: Message) throws -> [AttachmentSummary] {
            (files[message.id] ?? []).map(AttachmentSummary.init)
        }
    }

    private func branch(_ contents: [String]) -> [Message] {
        contents.enumerated().map { index, content in
            Message(id: "m\(index)", conversationID: "c", parentID: index == 0 ? nil : "m\(index - 1)",
                    role: index % 2 == 0 ? .user : .assistant, content: content, status: .complete,
                    finishReason: nil, model: nil, usage: nil, errorCode: nil, errorMessage: nil, html: nil,
                    createdAt: Date(), updatedAt: Date())
        }
    }

    private let photo = ChatAttachment.image(mediaType: "image/png", data: [UInt8](repeating: 7, count: 12_345))
    private func document(_ name: String, characters: Int) -> ChatAttachment {
        .document(filename: name, mediaType: "text/plain", text: String(repeating: "d", count: characters))
    }

    func testADocumentCostsItsWrappedTextAndAnImageAFixedEstimate() {
        let doc = AttachmentSummary(document("a.txt", characters: 100))
        XCTAssertEqual(doc.characters, 100 + "a.txt".count + "text/plain".count + 41)
        let wrapped = ChatMessage(role: .user, content: "q", attachments: [document("a.txt", characters: 100)])
        XCTAssertEqual(doc.characters, wrapped.textWithDocuments.count - "q".count,
                       "the estimate is exactly what the wrapping adds before the text")
        XCTAssertEqual(AttachmentSummary(photo).characters, AttachmentSummary.imageCharacters)
        XCTAssertEqual(AttachmentSummary.imageCharacters, 6_400)
    }

    func testEverythingFitsAndFilesGoWithTheirTurn() throws {
        let files = Files(["m0": [photo], "m2": [document("b.txt", characters: 10)]])
        let sent = try ContextBuilder(budget: 100_000, files: files)
            .messages(systemPrompt: nil, branch: branch(["q1", "a1", "q2"]))
        XCTAssertEqual(sent.map(\.content), ["q1", "a1", "q2"], "no note when nothing is left out")
        XCTAssertEqual(sent.map(\.attachments), [[photo], [], [document("b.txt", characters: 10)]])
    }

    func testAnOldImageIsLeftOutAndTheFirstTurnSentSaysSo() throws {
        let files = Files(["m0": [photo]])
        // The image alone is 6,400 characters: a budget of 100 keeps the newest two turns' text only.
        let builder = ContextBuilder(budget: 100, files: files)
        let sent = try builder.messages(systemPrompt: "sys", branch: branch(["look at this", "a cat", "and now?", "fine", "more?"]))
        XCTAssertEqual(sent.map(\.role), [.system, .user, .assistant, .user])
        XCTAssertEqual(sent[1].content, "[Left out to fit the model's context: from 1 earlier message, "
            + "the image (image/png, 12,345 bytes).]\n\nand now?")
        XCTAssertEqual(sent.last?.content, "more?", "the newest turn is as written")
        XCTAssertTrue(sent.allSatisfy(\.attachments.isEmpty))
        XCTAssertEqual(files.loads.withLock { $0 }, [], "a file that is not sent is never loaded")
    }

    func testAnOldTurnWithoutFilesIsDroppedSilentlyAsBefore() throws {
        let sent = try ContextBuilder(budget: 12, files: Files([:]))
            .messages(systemPrompt: nil, branch: branch(["aaaa", "bbbb", "cccc", "dddd", "eeee"]))
        XCTAssertEqual(sent.map(\.content), ["cccc", "dddd", "eeee"])
    }

    func testTheNewestTurnKeepsTheFilesThatFitInOrder() throws {
        let big = document("big.txt", characters: 5_000)
        let small = document("small.txt", characters: 100)
        let files = Files(["m2": [big, photo, small]])
        // 1,000 characters: "q2" and small.txt fit; big.txt and the image do not.
        let sent = try ContextBuilder(budget: 1_000, files: files).messages(systemPrompt: nil, branch: branch(["q1", "a1", "q2"]))
        XCTAssertEqual(sent.count, 1)
        XCTAssertEqual(sent[0].attachments, [small])
        XCTAssertEqual(sent[0].content, "[Left out to fit the model's context: from this message, "
            + "the document \"big.txt\" (text/plain, 5,000 characters), the image (image/png, 12,345 bytes).]\n\nq2")
        XCTAssertEqual(files.loads.withLock { $0 }, ["m2"])
    }

    func testAWholeDocumentGoesInWhenItFitsExactly() throws {
        let doc = document("fit.txt", characters: 500)
        let cost = AttachmentSummary(doc).characters
        let files = Files(["m0": [doc]])
        let exact = try ContextBuilder(budget: cost + 2, files: files).messages(systemPrompt: nil, branch: branch(["q1"]))
        XCTAssertEqual(exact.first?.attachments, [doc])
        XCTAssertEqual(exact.first?.content, "q1")
        let short = try ContextBuilder(budget: cost + 1, files: files).messages(systemPrompt: nil, branch: branch(["q1"]))
        XCTAssertEqual(short.first?.attachments, [])
        XCTAssertTrue(short.first?.content.hasPrefix("[Left out to fit the model's context: from this message, "
            + "the document \"fit.txt\"") == true)
    }

    func testEarlierAndCurrentFilesAreBothNamed() throws {
        let files = Files(["m0": [document("old.md", characters: 50)], "m2": [photo, photo]])
        // The newest turn alone takes the budget with one image: everything older goes, one image is cut.
        let sent = try ContextBuilder(budget: 6_500, files: files).messages(systemPrompt: nil, branch: branch(["q1", "a1", "q2"]))
        XCTAssertEqual(sent.map(\.role), [.user])
        XCTAssertEqual(sent[0].attachments, [photo])
        XCTAssertEqual(sent[0].content, "[Left out to fit the model's context: from 1 earlier message, "
            + "the document \"old.md\" (text/plain, 50 characters); from this message, "
            + "the image (image/png, 12,345 bytes).]\n\nq2")
    }

    func testAMessageOfFilesAloneIsSent() throws {
        let files = Files(["m0": [photo]])
        let sent = try ContextBuilder(budget: 10_000, files: files).messages(systemPrompt: nil, branch: branch([""]))
        XCTAssertEqual(sent.map(\.content), [""])
        XCTAssertEqual(sent.first?.attachments, [photo])
    }
}
