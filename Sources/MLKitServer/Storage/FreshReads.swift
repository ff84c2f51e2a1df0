import NIOConcurrencyHelpers

/// Shares reads of one key among the requests that need them, without ever giving a request
/// the result of a read that started before the request arrived.
///
/// At most one read of a key runs at a time. A request that arrives while none runs starts
/// one; a request that arrives while one runs waits for the *next* read, which starts as soon
/// as the running one ends and serves every request that arrived meanwhile. So under load one
/// read answers many requests, and each answer is at least as new as its request: a change
/// committed before a request arrived is always seen.
final class FreshReads<Value: Sendable>: Sendable {
    private struct Read {
        let id: Int
        let task: Task<Value, any Error>
    }

    private struct Slot {
        var running: Read?
        var next: Read?
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var lastID = 0
    }

    private let state = NIOLockedValueBox(State())

    /// The result of a read of `key` that started after this call.
    /// - Parameters:
    ///   - key: What is read, such as a collection.
    ///   - read: The read; it runs in a task of its own, shared by the callers that wait for it.
    func value(for key: String, read: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task: Task<Value, any Error> = state.withLockedValue { state in
            var slot = state.slots[key] ?? Slot()
            defer { state.slots[key] = slot }
            if slot.running == nil {
                let started = start(key, after: nil, read, &state)
                slot.running = started
                return started.task
            }
            if let next = slot.next { return next.task }
            let queued = start(key, after: slot.running?.task, read, &state)
            slot.next = queued
            return queued.task
        }
        return try await task.value
    }

    private func start(_ key: String, after previous: Task<Value, any Error>?,
                       _ read: @escaping @Sendable () async throws -> Value, _ state: inout State) -> Read {
        state.lastID += 1
        let id = state.lastID
        let task = Task {
            if let previous { _ = try? await previous.value }
            defer { self.finished(key, id: id) }
            return try await read()
        }
        return Read(id: id, task: task)
    }

    /// The read `id` of `key` ended: the next one, if any, becomes the running one.
    private func finished(_ key: String, id: Int) {
        state.withLockedValue { state in
            guard var slot = state.slots[key], slot.running?.id == id else { return }
            slot.running = slot.next
            slot.next = nil
            state.slots[key] = slot.running == nil ? nil : slot
        }
    }
}
