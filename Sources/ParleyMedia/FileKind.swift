/// What Parley makes of a file: an image goes to vision models as an image part, a document as text.
public enum FileKind: String, Sendable, Codable, Equatable {
    case image
    case document
}
