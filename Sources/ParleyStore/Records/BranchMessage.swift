/// One step of the current branch, with what the UI needs for its "< 2/3 >" switcher.
public struct BranchMessage: Sendable, Equatable {
    public let message: Message
    public let siblings: SiblingInfo

    public init(message: Message, siblings: SiblingInfo) {
        self.message = message
        self.siblings = siblings
    }
}
