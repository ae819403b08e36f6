import ParleyA2UI

/// The `PARLEY_SURFACE_*` settings (issue 22): the bounds on what `parley/render_ui` may draw and on the
/// actions pages send back.
extension ParleyConfiguration {
    static func surfaceLimits(read: SettingReader) throws(ConfigurationError) -> SurfaceLimits {
        let defaults = SurfaceLimits()
        return SurfaceLimits(
            maxComponents: try read.integer("PARLEY_SURFACE_MAX_COMPONENTS", default: defaults.maxComponents,
                                            range: 1...100_000),
            maxStringBytes: try read.integer("PARLEY_SURFACE_MAX_STRING_BYTES", default: defaults.maxStringBytes,
                                             range: 16...(16 << 20)),
            maxDepth: try read.integer("PARLEY_SURFACE_MAX_DEPTH", default: defaults.maxDepth, range: 4...256),
            maxActionBytes: try read.integer("PARLEY_SURFACE_MAX_ACTION_BYTES", default: defaults.maxActionBytes,
                                             range: 256...(16 << 20)))
    }
}
