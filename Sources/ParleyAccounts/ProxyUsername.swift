import Foundation

/// The rule for a username named by a trusted proxy's header (PARLEY_AUTH_HEADER): what SSO
/// gateways send (`alice`, `alice.smith`, `alice@example.org`) and nothing that could be mistaken in a
/// log line or the page: 1 to 254 characters (an e-mail address's limit) of ASCII letters, digits and
/// `. _ - @ +`, white space around it trimmed. Matching an existing account ignores case. The rule
/// itself is `AccountRules.isPlausibleUsername`: any name a proxy can sign in is one sign-in counts.
enum ProxyUsername {
    /// The username, or nil when the header's value breaks the rule.
    static func validated(_ raw: String) -> String? {
        let name = raw.trimmingCharacters(in: .whitespaces)
        return AccountRules.isPlausibleUsername(name) ? name : nil
    }
}
