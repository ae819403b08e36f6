import Foundation

/// The rule for a username named by a trusted proxy's header (PARLEY_AUTH_HEADER): what SSO
/// gateways send (`alice`, `alice.smith`, `alice@example.org`) and nothing that could be mistaken in a
/// log line or the page: 1 to 254 characters (an e-mail address's limit) of ASCII letters, digits and
/// `. _ - @ +`, white space around it trimmed. Matching an existing account ignores case.
enum ProxyUsername {
    static let maxLength = 254

    /// The username, or nil when the header's value breaks the rule.
    static func validated(_ raw: String) -> String? {
        let name = raw.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.utf8.count <= maxLength else { return nil }
        let allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-@+".utf8
        return name.utf8.allSatisfy(allowed.contains) ? name : nil
    }
}
