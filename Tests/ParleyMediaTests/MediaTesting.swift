import Foundation
import ParleyMedia
import XCTest

/// The tests' way to a real `MediaProcessor`: the built `parley-media-worker` as its worker, a scratch
/// directory of the test's own, any setting changed by `adjust`.
extension XCTestCase {
    func makeProcessor(_ adjust: (inout MediaSettings) -> Void = { _ in }) throws -> MediaProcessor {
        guard FileManager.default.isExecutableFile(atPath: MediaFixtures.worker.path) else {
            throw MediaFixtures.Failure("no worker at \(MediaFixtures.worker.path): run `swift build --build-tests` first")
        }
        var settings = MediaSettings(workerExecutable: MediaFixtures.worker,
                                     scratchDirectory: try MediaFixtures.directory(self))
        adjust(&settings)
        XCTAssertNil(settings.validate())
        return MediaProcessor(settings: settings)
    }

    /// Processes a file expected to pass; its work directory is removed at teardown.
    func processed(_ processor: MediaProcessor, _ file: URL, _ name: String? = nil,
                   mode: MediaMode = .upload) async throws -> ProcessedMedia {
        do {
            let media = try await processor.process(file, filename: name ?? file.lastPathComponent, mode: mode)
            addTeardownBlock { try? FileManager.default.removeItem(at: media.workDirectory) }
            return media
        } catch {
            throw MediaFixtures.Failure("\(name ?? file.lastPathComponent) refused: \(error)")
        }
    }

    /// The error for a file expected to be refused, or nil (a test failure) when it passed.
    func refusal(_ processor: MediaProcessor, _ file: URL, _ name: String? = nil,
                 mode: MediaMode = .upload) async -> MediaError? {
        do {
            let media = try await processor.process(file, filename: name ?? file.lastPathComponent, mode: mode)
            try? FileManager.default.removeItem(at: media.workDirectory)
            XCTFail("\(name ?? file.lastPathComponent) was accepted: \(media)")
            return nil
        } catch {
            return error
        }
    }

    /// Writes `data` as `name` in the test's own directory.
    func file(_ name: String, _ data: Data) throws -> URL {
        let url = try MediaFixtures.directory(self).appendingPathComponent(name)
        try data.write(to: url)
        return url
    }
}
