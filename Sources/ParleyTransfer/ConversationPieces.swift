import Foundation
import ParleyStore

/// One conversation's export document, given a piece at a time: the conversation (`ConversationExport`)
/// and then its `files`, each file's bytes base64-encoded a chunk at a time as they are read from the
/// store. So an export holds one chunk of one file in memory, never the files of a conversation, and
/// the body can be 64 MiB of attachments without costing the server 85 MiB of base64.
///
/// `files` comes last in the conversation's object (the other keys are sorted): every file any of its
/// user messages shows, once, in the order the messages first show them.
struct ConversationPieces: Sendable {
    /// Base64 turns 3 bytes into 4 characters: a chunk of a multiple of 3 bytes encodes without padding,
    /// so the chunks' encodings joined are the file's encoding.
    static let chunkSize = 3 * 64 * 1024

    private var head: [UInt8]?
    private var files: [StoredFile]
    private let embed: Bool
    private let store: Store
    private let owner: String
    private var reader: FileContentReader?
    private var written = 0
    private var finished = false

    /// The files a conversation's user messages show, each once, in order of first showing.
    static func files(of archive: ConversationArchive, messageFiles: [String: [StoredFile]]) -> [StoredFile] {
        var seen = Set<String>()
        var files: [StoredFile] = []
        for message in archive.messages where message.role == .user {
            for file in messageFiles[message.id] ?? [] where seen.insert(file.id).inserted {
                files.append(file)
            }
        }
        return files
    }

    /// `embed` false (`?attachments=omit`): the entries without `data`.
    init(archive: ConversationArchive, messageFiles: [String: [StoredFile]], standalone: Bool, embed: Bool,
         store: Store, owner: String) throws {
        var head = try ConversationExport(archive: archive, messageFiles: messageFiles, standalone: standalone).encoded()
        head.removeLast() // the object's `}`: `files` follows
        head += Array(",\"files\":[".utf8)
        self.head = head
        self.files = Self.files(of: archive, messageFiles: messageFiles)
        self.embed = embed
        self.store = store
        self.owner = owner
    }

    /// The next bytes of the conversation's object, nil after its `}`.
    mutating func next() throws -> [UInt8]? {
        if let head {
            self.head = nil
            return head
        }
        if var reader {
            if let chunk = try reader.next() {
                self.reader = reader
                return Array(Data(chunk).base64EncodedString().utf8)
            }
            self.reader = nil
            return Array("\",".utf8) + Array(try Self.entry(files.removeFirst()).dropFirst())
        }
        if finished { return nil }
        guard let file = files.first else {
            finished = true
            return Array("]}".utf8)
        }
        let comma: [UInt8] = written > 0 ? [UInt8(ascii: ",")] : []
        written += 1
        guard embed else { return comma + (try Self.entry(files.removeFirst())) }
        reader = try store.fileContent(id: file.id, ownedBy: owner, range: nil, chunkSize: Self.chunkSize)
        return comma + Array("{\"data\":\"".utf8)
    }

    /// A file's entry without its data: `{"filename","id","kind","media_type"}`, keys sorted.
    private static func entry(_ file: StoredFile) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(FileEntry(id: file.id, filename: file.filename, mediaType: file.mediaType,
                                                  kind: file.kind.rawValue)))
    }

    private struct FileEntry: Encodable {
        let id: String
        let filename: String
        let mediaType: String
        let kind: String

        enum CodingKeys: String, CodingKey {
            case id, filename, kind
            case mediaType = "media_type"
        }
    }
}
