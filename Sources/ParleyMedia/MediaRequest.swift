import Foundation

/// What the parent asks one `parley-media-worker` child, as one JSON object on its stdin. Written
/// by the parent only (paths it made, limits it holds), so the child may read it before its rlimits.
package struct MediaRequest: Codable, Sendable {
    package var input: String
    package var format: SniffedFormat
    package var mode: MediaMode
    /// The call's fresh directory: the child writes its outputs here and nowhere else.
    package var outputDirectory: String
    package var imageMaxEdge: Int
    package var imageMaxPixels: Int
    package var imageMaxBytes: Int
    package var pdfMaxPages: Int
    /// RLIMIT_AS, RLIMIT_CPU (seconds), RLIMIT_FSIZE.
    package var memoryBytes: Int
    package var cpuSeconds: Int
    package var outputMaxBytes: Int

    init(input: URL, format: SniffedFormat, mode: MediaMode, outputDirectory: URL, settings: MediaSettings) {
        self.input = input.path
        self.format = format
        self.mode = mode
        self.outputDirectory = outputDirectory.path
        imageMaxEdge = settings.imageMaxEdge
        imageMaxPixels = settings.imageMaxPixels
        imageMaxBytes = settings.imageMaxBytes
        pdfMaxPages = settings.pdfMaxPages
        memoryBytes = settings.memoryBytes
        // vips decodes on up to one thread per core, so CPU time may exceed wall time: the wall-clock
        // timeout is the real limit; this one is the backstop should the parent die.
        cpuSeconds = Int(settings.timeout.components.seconds) * 2 + 2
        outputMaxBytes = settings.outputMaxBytes
    }

    package func output(_ name: String) -> URL {
        URL(fileURLWithPath: outputDirectory).appendingPathComponent(name)
    }
}
