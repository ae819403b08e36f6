import Foundation

/// The order of one user's search results: BM25 computed over that user's matching rows alone.
///
/// The rows' count, their average length and how many of them hold each phrase all come from the
/// candidates given (the caller's own matches), never from the index, which holds every user's
/// text: the order then depends on the caller's text only (issue 17). Ties go to the newer row.
struct SearchRanking {
    /// One matching row: its document, its conversation and message, and its counts.
    struct Candidate: Sendable, Equatable {
        let doc: Int64
        let conversationID: String
        let messageID: String?
        let counts: MatchCounts
    }

    /// BM25's usual constants (FTS5's bm25() uses the same).
    static let k1 = 1.2
    static let b = 0.75

    let candidates: [Candidate]

    /// Each candidate's score, in the candidates' order.
    var scores: [Double] {
        let count = Double(candidates.count)
        guard count > 0 else { return [] }
        let phrases = candidates.map(\.counts.phrases.count).max() ?? 0
        let averageLength = max(Double(candidates.reduce(0) { $0 + $1.counts.length }) / count, 1)
        let weights = (0..<phrases).map { phrase -> Double in
            let holding = Double(candidates.count { $0.counts.phrases.indices.contains(phrase) && $0.counts.phrases[phrase] > 0 })
            // Lucene's form, never negative: a phrase every row holds still counts a little.
            return log(1 + (count - holding + 0.5) / (holding + 0.5))
        }
        return candidates.map { candidate in
            let norm = Self.k1 * (1 - Self.b + Self.b * Double(candidate.counts.length) / averageLength)
            return zip(weights, candidate.counts.phrases).reduce(0) { score, pair in
                let frequency = Double(pair.1)
                return score + pair.0 * frequency * (Self.k1 + 1) / (frequency + norm)
            }
        }
    }

    /// The best candidate of each conversation, best conversations first, at most `limit`.
    func best(limit: Int) -> [Candidate] {
        let scored = zip(candidates, scores).sorted { left, right in
            left.1 != right.1 ? left.1 > right.1 : left.0.doc > right.0.doc
        }
        var seen: Set<String> = []
        var best: [Candidate] = []
        for (candidate, _) in scored where best.count < limit && seen.insert(candidate.conversationID).inserted {
            best.append(candidate)
        }
        return best
    }
}
