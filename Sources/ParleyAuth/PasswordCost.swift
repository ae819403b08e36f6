/// The Argon2id cost a stored hash was made with, read from its string
/// (`$argon2id$v=19$m=65536,t=2,p=1$salt$hash`): how long checking a password against it takes
/// depends on this alone, so sign-in can tell the slowest cost still stored without trying each.
public struct PasswordCost: Hashable, Sendable, CustomStringConvertible {
    /// Argon2id memory, in KiB (`m=`).
    public var memoryKiB: Int
    /// Passes over memory (`t=`).
    public var operations: UInt64

    public init(memoryKiB: Int, operations: UInt64) {
        self.memoryKiB = memoryKiB
        self.operations = operations
    }

    /// The cost of an Argon2id string; nil for anything else (a malformed hash is checked at no cost).
    public init?(hash: String) {
        let fields = hash.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].isEmpty, fields[1] == "argon2id" else { return nil }
        var memory: Int?
        var passes: UInt64?
        for parameter in fields[3].split(separator: ",") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            switch pair[0] {
            case "m": memory = Int(pair[1])
            case "t": passes = UInt64(pair[1])
            default: continue
            }
        }
        guard let memory, let passes, memory > 0, passes > 0 else { return nil }
        self.init(memoryKiB: memory, operations: passes)
    }

    /// This hasher's cost.
    public init(_ hasher: PasswordHasher) {
        self.init(memoryKiB: hasher.memoryBytes / 1024, operations: hasher.operations)
    }

    /// A hasher that makes hashes of this cost.
    public var hasher: PasswordHasher {
        PasswordHasher(operations: operations, memoryBytes: memoryKiB * 1024)
    }

    public var description: String { "m=\(memoryKiB),t=\(operations)" }
}
