/// What `FileStore.deleteFile` did: a file that messages still hold cannot lose its bytes (those
/// messages show and resend it), so it is only hidden until the last of them is deleted.
public enum FileDeletion: Sendable, Equatable {
    /// The file and its bytes are gone.
    case removed
    /// Hidden from lists and refused for new messages, but kept because `messages` messages hold it;
    /// it goes when the last of them is deleted.
    case kept(messages: Int)
}
