/// The bounds on what a model may draw (`PARLEY_SURFACE_*`): why explicit, because every surface is
/// model-written input that the server stores and every tab renders.
public struct SurfaceLimits: Sendable, Equatable {
    /// Components one surface may hold (`PARLEY_SURFACE_MAX_COMPONENTS`, 500).
    public var maxComponents: Int
    /// Bytes of one string or key of a message (`PARLEY_SURFACE_MAX_STRING_BYTES`, 8192).
    public var maxStringBytes: Int
    /// Nesting of one message's JSON, and of a surface's component tree (`PARLEY_SURFACE_MAX_DEPTH`, 32).
    public var maxDepth: Int
    /// Bytes of one action a page sends back (`PARLEY_SURFACE_MAX_ACTION_BYTES`, 65536).
    public var maxActionBytes: Int

    public init(maxComponents: Int = 500, maxStringBytes: Int = 8192, maxDepth: Int = 32, maxActionBytes: Int = 65_536) {
        self.maxActionBytes = maxActionBytes
        self.maxComponents = maxComponents
        self.maxStringBytes = maxStringBytes
        self.maxDepth = maxDepth
    }
}
