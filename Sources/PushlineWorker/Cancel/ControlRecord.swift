import Foundation
import PushlineAPNSCore

/// A record of the control topic (`kafka.control_topic`), the one definition `pushline cancel`
/// writes and every worker's `ControlTopicReader` reads.
///
/// Key: `CancelTarget.key` (`campaign:<name>` or `job:<id>`), so compaction keeps one record per
/// target. Value: a cancel,
/// `{"type":"cancel","campaign":"<name>","reason":"<text>"|null,"at":<unix ms>}` (`"job":"<id>"`
/// in place of `"campaign"` for a job), or none (a tombstone: the cancel is lifted).
public struct ControlRecord: Sendable, Hashable {
    public var target: CancelTarget
    /// nil for a tombstone (`pushline cancel --undo`).
    public var cancel: Cancel?

    public struct Cancel: Sendable, Hashable {
        public var reason: String?
        /// When the sender wrote it (unix milliseconds), for people; the worker times a cancel by
        /// its record's timestamp.
        public var atMilliseconds: Int64

        public init(reason: String?, atMilliseconds: Int64) {
            self.reason = reason
            self.atMilliseconds = atMilliseconds
        }
    }

    public init(target: CancelTarget, cancel: Cancel?) {
        self.target = target
        self.cancel = cancel
    }

    /// The record's key bytes.
    public var key: [UInt8] { Array(target.key.utf8) }

    /// The record's value bytes; nil for a tombstone.
    public var value: [UInt8]? {
        guard let cancel else { return nil }
        var bytes = Array(#"{"type":"cancel",""#.utf8)
        switch target {
        case .campaign(let name):
            bytes += Array(#"campaign":"#.utf8)
            JSONString.append(name, to: &bytes)
        case .job(let id):
            bytes += Array(#"job":"#.utf8)
            JSONString.append(id, to: &bytes)
        }
        bytes += Array(#","reason":"#.utf8)
        if let reason = cancel.reason {
            JSONString.append(reason, to: &bytes)
        } else {
            bytes += Array("null".utf8)
        }
        bytes += Array(#","at":\#(cancel.atMilliseconds)}"#.utf8)
        return bytes
    }

    /// Why a control record was not understood (the reader logs it and skips the record).
    public struct Malformed: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Reads a control record strictly: the key must name a target, and a value must be a cancel
    /// of that same target with every field of the right type and no other field.
    public init(key: ArraySlice<UInt8>?, value: ArraySlice<UInt8>?) throws(Malformed) {
        guard let key, let text = String(validating: key, as: UTF8.self) else {
            throw Malformed("no key, or a key that is not UTF-8")
        }
        guard let target = CancelTarget(key: text) else {
            throw Malformed("key '\(text.prefix(200))' is neither campaign:<name> nor job:<id>")
        }
        let (name, field) =
            switch target {
            case .campaign(let name): (name, "campaign")
            case .job(let id): (id, "job")
            }
        guard !name.isEmpty, name.utf8.count <= 128 else {
            throw Malformed("key '\(text.prefix(200))': the name must be 1 to 128 bytes")
        }
        self.target = target
        guard let value, !value.isEmpty else {
            cancel = nil
            return
        }
        let fields: ControlRecordFields
        do {
            fields = try JSONDecoder().decode(ControlRecordFields.self, from: Data(value))
        } catch let error as Malformed {
            throw error
        } catch {
            throw Malformed("value is not a cancel object: \(error)".prefix(300).description)
        }
        guard fields.type == "cancel" else {
            throw Malformed("type must be \"cancel\"")
        }
        guard fields.names == [field: name] else {
            throw Malformed("value must name the key's \(field), '\(name.prefix(128))', and nothing else")
        }
        let (reason, milliseconds) = (fields.reason, fields.at)
        cancel = Cancel(reason: reason, atMilliseconds: milliseconds)
    }

    /// The change this record makes, read at `timestampMilliseconds` (the record's timestamp);
    /// a cancel holds until `retentionMilliseconds` after it. nil for a cancel already expired
    /// at `nowMilliseconds`.
    public func change(timestampMilliseconds: Int64, retentionMilliseconds: Int64, nowMilliseconds: Int64) -> CancelChange? {
        guard let cancel else { return .lift(target) }
        let expires = timestampMilliseconds + retentionMilliseconds
        guard expires > nowMilliseconds else { return nil }
        return .cancel(target: target, reason: cancel.reason, writtenAtMilliseconds: timestampMilliseconds, expiresAtMilliseconds: expires)
    }
}
