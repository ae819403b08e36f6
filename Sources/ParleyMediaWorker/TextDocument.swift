import Foundation
import ParleyMedia

/// The child's text step: the whole file must be UTF-8, and a `.json` file must parse (Foundation's
/// parser is fine here: a hostile nesting depth crashes the child, not Parley). The text is the file.
struct TextDocument {
    let request: MediaRequest

    func run(mediaType: String) throws(MediaError) -> ProcessedMedia {
        let input = URL(fileURLWithPath: request.input)
        guard let data = try? Data(contentsOf: input, options: .alwaysMapped) else {
            throw .unreadable("cannot read the text file")
        }
        if data.isEmpty { throw .empty }
        guard let text = String(validating: data, as: UTF8.self) else { throw .notUTF8 }
        if mediaType == "application/json" {
            do {
                _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            } catch {
                let reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
                throw .invalidJSON(reason ?? "not valid JSON")
            }
        }
        return ProcessedMedia(kind: .document, mediaType: mediaType, content: input, text: input,
                              textCharacters: text.unicodeScalars.count,
                              workDirectory: URL(fileURLWithPath: request.outputDirectory))
    }
}
