import Foundation

/// A small seeded generator so random tests are reproducible: a failure prints its seed, and the same
/// seed replays the same run.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A generator for a randomised test: seeded from `PARLEY_TEST_SEED` when set (to replay a
    /// failure), else from the system generator. The seed is printed with `label`, so every failing
    /// run can be replayed exactly.
    public static func forTest(_ label: String) -> SplitMix64 {
        let seed = ProcessInfo.processInfo.environment["PARLEY_TEST_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("\(label): seed \(seed) (replay with PARLEY_TEST_SEED=\(seed))")
        return SplitMix64(seed: seed)
    }
}
