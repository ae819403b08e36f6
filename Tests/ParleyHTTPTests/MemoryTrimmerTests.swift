@testable import ParleyHTTP
import Synchronization
import XCTest

/// Trims are asked for by large releases only, at most one per interval, and the last release of a
/// burst is always followed by one.
final class MemoryTrimmerTests: XCTestCase {
    func testReleasesTrimAtMostOncePerIntervalAndTheLastOneIsFollowedByATrim() {
        let times = Mutex<[UInt64]>([])
        let trimmer = MemoryTrimmer(interval: 0.3) {
            times.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
        }
        let started = DispatchTime.now().uptimeNanoseconds
        var lastRelease = started
        // 200 large releases over about a second.
        for _ in 0..<200 {
            trimmer.released(MemoryTrimmer.minimumRelease)
            lastRelease = DispatchTime.now().uptimeNanoseconds
            usleep(5_000)
        }
        let deadline = Date().addingTimeInterval(10)
        while times.withLock({ $0.last ?? 0 }) < lastRelease, Date() < deadline { usleep(10_000) }
        let trims = times.withLock { $0 }
        XCTAssertGreaterThanOrEqual(trims.last ?? 0, lastRelease, "a trim follows the last release")
        let elapsed = Double((trims.last ?? started) - started) / 1e9
        XCTAssertLessThanOrEqual(trims.count, Int(elapsed / 0.3) + 1, "at most one trim per interval: \(trims.count)")
        for (earlier, later) in zip(trims, trims.dropFirst()) {
            XCTAssertGreaterThanOrEqual(Double(later - earlier) / 1e9, 0.29)
        }
    }

    func testSmallReleasesDoNotTrim() {
        let trims = Counter()
        let trimmer = MemoryTrimmer(interval: 0.01) { trims.increment() }
        for _ in 0..<100 { trimmer.released(MemoryTrimmer.minimumRelease - 1) }
        usleep(200_000)
        XCTAssertEqual(trims.current, 0)
        trimmer.released(MemoryTrimmer.minimumRelease)
        XCTAssertTrue(trims.wait(for: 1, timeout: 10))
    }

    func testGlibcMallocTrimIsFound() {
        #if canImport(Glibc)
        // Runs the real function: it must exist on glibc (or memory would never be returned).
        XCTAssertNotNil(dlsym(nil, "malloc_trim"))
        MemoryTrimmer.mallocTrim()
        #endif
    }
}
