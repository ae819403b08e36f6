import ParleyPrimitives

/// Which image URLs a surface may show: only the caller's own Parley files, `/api/files/{id}`. An image
/// URL the model chooses could leak data to its host, and the page's CSP allows only 'self' images, so
/// https:, data: and javascript: URLs (and any other form) are refused. `isOwnFile` answers whether a
/// file id is one of the caller's live files (the store, injected: this module knows no store).
public struct ImagePolicy: Sendable {
    public static let prefix = "/api/files/"
    let isOwnFile: @Sendable (String) -> Bool

    public init(isOwnFile: @escaping @Sendable (String) -> Bool) {
        self.isOwnFile = isOwnFile
    }

    /// Accepts every well-formed file URL without asking (surfaces read back from the store, already checked).
    public static let trusted = ImagePolicy { _ in true }

    /// What is wrong with `url` as an image URL, nil when it is fine.
    public func fault(of url: String) -> String? {
        guard url.hasPrefix(Self.prefix) else {
            return "an image URL must be one of your Parley files (/api/files/{id}), not '\(url.prefix(60))'"
        }
        let id = url.dropFirst(Self.prefix.count)
        guard !id.isEmpty, id.count <= 64,
              id.unicodeScalars.allSatisfy({ ($0.properties.isASCIIHexDigit || ("a"..."z").contains($0)
                  || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }) else {
            return "'\(url.prefix(60))' is not a Parley file URL (/api/files/{id})"
        }
        return isOwnFile(String(id)) ? nil : "'\(url.prefix(60))' is not one of your files"
    }

    /// What is wrong with a data-model value bound to an Image's URL (nil: none, or fine).
    func fault(ofBound value: JSON?) -> String? {
        guard let value, value != .null else { return nil }
        guard let url = value.stringValue else { return "an image URL must be a string" }
        return fault(of: url)
    }
}
