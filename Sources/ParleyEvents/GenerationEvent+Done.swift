import ParleyGeneration

extension GenerationEvent {
    /// Whether this event ends the run (`done`): a stream closes after it.
    package var isDone: Bool {
        if case .done = payload { return true }
        return false
    }
}
