/// Who wrote a message.
public enum Role: String, Sendable, Equatable, CaseIterable {
    case user, assistant, system
}
