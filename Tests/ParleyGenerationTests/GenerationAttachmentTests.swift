import Foundation
@testable import ParleyGeneration
import ParleyProviders
import ParleyStore
import XCTest

/// The `AttachmentSource` seam end to end, with a real store and the demo model: the files it gives a
/// user message reach the provider with that message; a source that fails ends the reply `failed`
/// with `attachments_unreadable` at once, never leaving it `streaming`.
final class GenerationAttachmentTests: XCTestCase {
    /// The signature and IHDR of a 640×480 PNG.
    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13,
                                       0x49, 0x48, 0x44, 0x52, 0, 0, 0x02, 0x80, 0, 0, 0x01, 0xE0, 8, 6, 0, 0, 0]

    /// Every user message carries the same files.
    private struct EveryUserMessage: AttachmentSource {
        let files: [ChatAttachment]

        func attachments(for message: Message) throws -> [ChatAttachment] {
            message.role == .user ? files : []
        }
    }

    private struct Unreadable: AttachmentSource, Error {
        func attachments(for message: Message) throws -> [ChatAttachment] { throw self }
    }

    private func generations(_ files: any AttachmentSource) throws -> (Generations, Store, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-files-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory.appendingPathComponent("parley.sqlite").path)
        let generations = Generations(store: store, providers: ProviderRegistry(providers: [], demo: DemoProvider(tokensPerSecond: 0)),
                                      limits: GenerationLimits(), files: files)
        return (generations, store, directory)
    }

    func testTheDemoModelDescribesTheImageTheSourceGives() async throws {
        let files: [ChatAttachment] = [.image(mediaType: "image/png", data: Self.png),
                                       .document(filename: "notes.md", mediaType: "text/markdown", text: "# Notes")]
        let (generations, store, directory) = try generations(EveryUserMessage(files: files))
        defer { try? FileManager.default.removeItem(at: directory) }
        let conversation = try store.createConversation(model: DemoProvider.modelID)
        let (_, reply) = try await generations.send(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                                   content: "What is this?", model: nil, owner: User.localID)
        let outcome = try await generations.outcome(of: reply.id)
        XCTAssertEqual(outcome.status, .complete)
        let stored = try XCTUnwrap(try store.message(id: reply.id))
        XCTAssertEqual(stored.content, DemoProvider.answer(to: "What is this?", attachments: files))
        XCTAssertTrue(stored.content.contains("I see 1 image: 640×480 PNG, 29 bytes. "
            + "I read 1 document: notes.md (text/markdown, 7 characters)."), stored.content)
    }

    func testAnUnreadableSourceFailsTheReplyAtOnce() async throws {
        let (generations, store, directory) = try generations(Unreadable())
        defer { try? FileManager.default.removeItem(at: directory) }
        let conversation = try store.createConversation(model: DemoProvider.modelID)
        let (_, reply) = try await generations.send(conversationID: conversation.id, placement: .afterCurrentLeaf,
                                                   content: "hello", model: nil, owner: User.localID)
        let stored = try XCTUnwrap(try store.message(id: reply.id))
        XCTAssertEqual(stored.status, .failed)
        XCTAssertEqual(stored.errorCode, .attachmentsUnreadable)
        XCTAssertEqual(reply.status, .failed, "the answer to send already says so")
        let live = await generations.liveCount
        XCTAssertEqual(live, 0)
    }
}
