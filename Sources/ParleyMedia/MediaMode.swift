/// Whether the worker may change the bytes. An import must store exactly the bytes it was given (an
/// export -> import round trip is byte-identical), yet they pass every check an upload passes.
public enum MediaMode: String, Sendable, Codable, Equatable {
    /// Re-encode images (downscaled, metadata stripped), make a thumbnail, extract text.
    case upload
    /// Decode and check as an upload would, make the thumbnail and text; `content` is the input.
    /// An image must already be within the upload's edge and byte limits, else `.tooManyPixels`.
    case verify
}
