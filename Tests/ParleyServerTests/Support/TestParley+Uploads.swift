import Foundation
import ParleyTestSupport

extension TestParley {
    /// Uploads `bytes` to `POST /api/files`: raw, with `filename` in the query (percent-encoded), or as
    /// the one part of a multipart body. `type` is the raw body's Content-Type, and the part's when one
    /// is given. On a blocking client with a long timeout: bodies of many megabytes are sent whole.
    func upload(_ bytes: [UInt8], filename: String, type: String? = nil, multipart: Bool = false,
                headers extra: [(String, String)] = []) async throws -> Reply {
        let base = self.base
        return try await Blocking.run {
            var body = bytes
            var headers = [("Content-Type", type ?? "application/octet-stream")]
            var url = base + "/api/files?filename=" + (filename.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            if multipart {
                let boundary = "parley-test-boundary-7f3a"
                let partType = type.map { "Content-Type: \($0)\r\n" } ?? ""
                body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\n\(partType)\r\n".utf8)
                    + bytes + Array("\r\n--\(boundary)--\r\n".utf8)
                headers = [("Content-Type", "multipart/form-data; boundary=\(boundary)")]
                url = base + "/api/files"
            }
            let response = try TestHTTPClient().request("POST", url, headers: headers + extra, body: body, timeout: 60)
            return Reply(status: response.status, headers: response.headers, text: response.text)
        }
    }
}
