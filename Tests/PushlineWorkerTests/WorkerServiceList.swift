import Foundation
import Testing

/// The services `pushline run` builds its one `ServiceGroup` from, in order, read from the code's
/// tokens (comments and strings left out). The parse is simple on purpose, and says what it
/// expects when the code takes another shape:
///
/// - Sources/pushline/RunCommand.swift, `func run`: each `services.append(.init(service: T(…)…))`
///   is service `T`; `services += … Worker(…).services()` stands for the worker's services.
/// - Sources/PushlineWorker/Worker/Worker.swift, `func services`: its last `return [ … ]`, read in
///   order. Each `.init(service: X …)` is a service: `X` itself when capitalised (a type), else the
///   local `let X = [try] T(…)` of the same function. Each `+ name.label` (`parked.consumer`) stands
///   for the services of the function `let name = f(…)` calls, under that label of its return
///   tuple; those run only with several apps (the only function that returns them so).
/// - that function (`deferredServices`): its labels in the order of its return type
///   `-> (consumer: […], intake: […])`, and the `.init(service: T(…))`s of its last `return (…)`, one
///   per label, in the same order.
enum WorkerServiceList {
    struct Service: Equatable, CustomStringConvertible {
        var type: String
        var severalAppsOnly: Bool
        var description: String { severalAppsOnly ? "\(type) (several apps only)" : type }
    }

    static let runCommand = "Sources/pushline/RunCommand.swift"
    static let worker = "Sources/PushlineWorker/Worker/Worker.swift"

    static func fromCode(root: URL) throws -> [Service] {
        let run = try file(runCommand, root: root)
        let body = try #require(run.function("run")?.body, "\(runCommand): no `func run`")
        var services: [Service] = []
        for index in body {
            if run.spells(["services", ".", "append", "(", ".", "init", "(", "service", ":"], at: index) {
                services.append(Service(type: run.tokens[index + 9].text, severalAppsOnly: false))
            } else if run.spells(["services", "+", "="], at: index) {
                let end = try #require(
                    run.tokens[index...].indices.first { run.spells([".", "services", "(", ")"], at: $0) },
                    "\(runCommand): `services += …` no longer ends in `.services()`: read the new shape here"
                )
                try #require(
                    run.tokens[index..<end].contains { $0.text == "Worker" },
                    "\(runCommand): `services += …` no longer adds `Worker(…).services()`: read the new shape here"
                )
                services += try workerServices(root: root)
            }
        }
        return services
    }

    /// `Worker.services()`'s list.
    static func workerServices(root: URL) throws -> [Service] {
        let source = try file(worker, root: root)
        let body = try #require(source.function("services")?.body, "\(worker): no `func services`")
        let start = try #require(
            body.last { source.spells(["return", "["], at: $0) },
            "\(worker): `services()` no longer ends in `return [ … ]`: read the new shape here"
        )
        var services: [Service] = []
        for index in start...body.upperBound {
            if source.spells([".", "init", "(", "service", ":"], at: index) {
                let name = source.tokens[index + 5].text
                let type = try resolve(name, in: source, body: body)
                services.append(Service(type: type, severalAppsOnly: false))
            } else if source.tokens[index].text == "+", index + 3 <= body.upperBound,
                SwiftSourceFile.isWord(source.tokens[index + 1].text), source.tokens[index + 2].text == "."
            {
                let (name, label) = (source.tokens[index + 1].text, source.tokens[index + 3].text)
                let function = try resolve(name, in: source, body: body)
                let labelled = try tupleServices(function, in: source)
                let type = try #require(
                    labelled[label],
                    "\(worker): `\(function)` returns no `\(label)` (it returns \(labelled.keys.sorted()))"
                )
                services.append(Service(type: type, severalAppsOnly: true))
            }
        }
        return services
    }

    /// The type or function a local of `body` is made by: `let name = [try] T(`.
    private static func resolve(_ name: String, in source: SwiftSourceFile, body: ClosedRange<Int>) throws -> String {
        if let first = name.first, first.isUppercase { return name }
        let found = body.first { index in
            source.spells(["let", name, "="], at: index)
        }
        let index = try #require(found, "\(worker): `\(name)` is not a `let` of `services()`: read the new shape here")
        let valueIndex = source.tokens[index + 3].text == "try" ? index + 4 : index + 3
        try #require(
            source.tokens[valueIndex + 1].text == "(",
            "\(worker): `let \(name) = …` is not `[try] T(…)`: read the new shape here"
        )
        return source.tokens[valueIndex].text
    }

    /// The service of each label of the tuple `function` returns.
    private static func tupleServices(_ function: String, in source: SwiftSourceFile) throws -> [String: String] {
        let (signature, body) = try #require(source.function(function), "\(worker): no `func \(function)`")
        let arrow = try #require(
            signature.first { source.spells(["-", ">"], at: $0) },
            "\(worker): `\(function)` returns nothing"
        )
        var labels: [String] = []
        var depth = 0
        for index in (arrow + 2)..<signature.upperBound {
            let text = source.tokens[index].text
            if text == "[" || text == "(" { depth += 1 }
            if text == "]" || text == ")" { depth -= 1 }
            if depth == 1, source.tokens[index + 1].text == ":", SwiftSourceFile.isWord(text) { labels.append(text) }
        }
        let start = try #require(
            body.last { source.spells(["return", "("], at: $0) },
            "\(worker): `\(function)` no longer ends in `return ( … )`: read the new shape here"
        )
        let types = (start...body.upperBound).filter { source.spells([".", "init", "(", "service", ":"], at: $0) }
            .map { source.tokens[$0 + 5].text }
        try #require(
            types.count == labels.count,
            "\(worker): `\(function)` returns \(types) under the labels \(labels): one service per label is what this reads"
        )
        return Dictionary(uniqueKeysWithValues: zip(labels, types))
    }

    private static func file(_ path: String, root: URL) throws -> SwiftSourceFile {
        SwiftSourceFile(path: path, text: try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
    }
}
