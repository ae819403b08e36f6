import Foundation
import ParleyMedia

/// The `PARLEY_IMAGE_*`, `PARLEY_PDF_MAX_PAGES` and `PARLEY_MEDIA_*` settings: the limits of uploaded
/// files' decoding and the `parley-media-worker` executable that does it.
extension ParleyConfiguration {
    static func mediaSettings(read: SettingReader) throws(ConfigurationError) -> MediaSettings {
        var media = MediaSettings()
        media.imageMaxEdge = try read.integer("PARLEY_IMAGE_MAX_EDGE", default: media.imageMaxEdge, range: 16...65_535)
        media.imageMaxPixels = try read.integer("PARLEY_IMAGE_MAX_PIXELS", default: media.imageMaxPixels,
                                                range: 1...2_000_000_000)
        media.imageMaxBytes = try read.integer("PARLEY_IMAGE_MAX_BYTES", default: media.imageMaxBytes,
                                               range: 4096...(1 << 30))
        media.pdfMaxPages = try read.integer("PARLEY_PDF_MAX_PAGES", default: media.pdfMaxPages, range: 1...100_000)
        media.timeout = .milliseconds(Int64(1000 * (try read.seconds("PARLEY_MEDIA_TIMEOUT", default: 30))))
        media.workers = try read.integer("PARLEY_MEDIA_WORKERS", default: media.workers, range: 1...256)
        media.queue = try read.integer("PARLEY_MEDIA_QUEUE", default: media.queue, range: 0...100_000)
        media.spares = try read.integer("PARLEY_MEDIA_SPARES", default: media.spares, range: 0...256)
        media.memoryBytes = try read.integer("PARLEY_MEDIA_MEMORY_BYTES", default: media.memoryBytes, range: (256 << 20)...(1 << 40))
        media.workerExecutable = mediaWorker(read: read)
        return media
    }

    /// PARLEY_MEDIA_WORKER: the worker executable (a relative path is from the working directory);
    /// unset or empty, the `parley-media-worker` beside the running `parley`.
    static func mediaWorker(read: SettingReader) -> URL {
        guard let path = read.values["PARLEY_MEDIA_WORKER"]?.trimmingCharacters(in: .whitespaces), !path.isEmpty else {
            return MediaSettings.besideRunningExecutable
        }
        return URL(fileURLWithPath: path).standardizedFileURL
    }
}
