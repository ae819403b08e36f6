import ParleyOutcome

extension ReplyErrorCode {
    /// The files of the history could not be read when the reply started: the reply ends `failed` at
    /// once, nothing sent upstream. Spelled through `.other` (it round-trips through SQL and JSON the
    /// same); a case of its own is for the change that also wires the store's files.
    public static let attachmentsUnreadable = ReplyErrorCode.other("attachments_unreadable")
}
