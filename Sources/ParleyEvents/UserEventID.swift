/// How far a user event stream has got, written as every event's `id:` so that EventSource's
/// Last-Event-ID resumes both of the stream's parts at once: the user's notifications and the
/// followed reply. Text forms: `S` (notifications up to id S; no event of the followed reply yet),
/// `S.R` (and the followed reply up to its event id R) and `S.done` (and the reply's `done`: nothing of
/// it is sent again). Each part is decimal digits only, so a client's value is read exactly or refused.
struct UserEventID: Sendable, Equatable {
    /// The followed reply's part.
    enum Reply: Sendable, Equatable {
        case none
        case at(Int64)
        case done
    }

    var notification: Int64
    var reply: Reply

    init(notification: Int64, reply: Reply = .none) {
        self.notification = notification
        self.reply = reply
    }

    /// Reads a Last-Event-ID; nil when it is not one of the three forms.
    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let notification = Self.number(parts[0]) else { return nil }
        self.notification = notification
        guard parts.count == 2 else {
            reply = .none
            return
        }
        if parts[1] == "done" {
            reply = .done
        } else if let id = Self.number(parts[1]) {
            reply = .at(id)
        } else {
            return nil
        }
    }

    var text: String {
        switch reply {
        case .none: "\(notification)"
        case .at(let id): "\(notification).\(id)"
        case .done: "\(notification).done"
        }
    }

    /// A non-negative Int64 written with ASCII digits only (no sign, space or exponent), at most 18 digits.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}
