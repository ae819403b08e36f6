/// Runs a latency measurement three times and returns the median (the times are printed with
/// `label`). One attempt delayed by a busy machine (a thread not scheduled for a while) cannot fail
/// a bound checked on the median, while a real regression (say, a cancel noticed only at the next
/// 1 s poll) still misses it on at least two attempts of three.
public func medianOfThree(_ label: String, _ attempt: () async throws -> Duration) async rethrows -> Duration {
    var latencies: [Duration] = []
    for _ in 0..<3 { latencies.append(try await attempt()) }
    latencies.sort()
    print("\(label): \(latencies) (median \(latencies[1]))")
    return latencies[1]
}
