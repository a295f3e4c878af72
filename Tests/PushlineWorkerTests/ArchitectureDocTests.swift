import Foundation
import Testing

/// docs/architecture.md states counts and lists the code decides: these tests read both and fail
/// when they part, naming what to change (as `ConfigurationKeysTests` does for
/// docs/configuration.md's tables).
@Suite struct ArchitectureDocTests {
    static let unsafeHeading = "Unsafe constructs on the hot path"
    static let lifecycleHeading = "Lifecycle"
    static let ownerHeading = "One owner for each piece of state"
    static let attribute = ["@", "exclusivity", "(", "unchecked", ")"]

    /// The `@exclusivity(unchecked)` row gives its total ("on 40 stored properties") and each
    /// type's count ("`TLSHandler` (5)"), the mock's row its total ("the mock's 18") and each
    /// type's count: each must be what the code has, and every attribute in Sources/ must belong
    /// to a type one of the two rows lists. An attribute counts for the innermost type whose body
    /// holds it; one in a comment or a string does not count.
    @Test func theUnsafeTableCountsTheExclusivityAttributesInTheCode() throws {
        var counts: [String: Int] = [:]
        var places: [String: String] = [:]
        for file in try ArchitectureDocument.sources() {
            for offset in file.occurrences(of: Self.attribute) {
                let owner = file.innermostType(at: offset)?.name ?? "the top level of \(file.path)"
                counts[owner, default: 0] += 1
                places[owner] = file.path
            }
        }
        let rows = try ArchitectureDocument().table(under: Self.unsafeHeading)
        let worker = try #require(
            rows.first { $0.first?.contains("`@exclusivity(unchecked)`") == true },
            "\(ArchitectureDocument.path), \"\(Self.unsafeHeading)\": no row for `@exclusivity(unchecked)`"
        )
        let mock = try #require(
            rows.first { $0.first?.hasPrefix("the mock's") == true },
            "\(ArchitectureDocument.path), \"\(Self.unsafeHeading)\": no row for the mock's attributes (\"the mock's N (…)\")"
        )
        let workerTotal = try Self.number(in: worker[0], #/on (\d+) stored properties/#, row: "the worker's row")
        let mockTotal = try Self.number(in: mock[0], #/the mock's (\d+)/#, row: "the mock's row")
        let workerTypes = Self.typeCounts(worker[1])
        let mockTypes = Self.typeCounts(mock[0])
        for (row, total, types) in [("the worker's row", workerTotal, workerTypes), ("the mock's row", mockTotal, mockTypes)] {
            #expect(
                !types.isEmpty,
                "\(ArchitectureDocument.path), \"\(Self.unsafeHeading)\", \(row): list its types with their counts, as \"`Type` (count)\""
            )
            for (type, stated) in types {
                let actual = counts[type, default: 0]
                #expect(
                    stated == actual,
                    """
                    \(ArchitectureDocument.path), "\(Self.unsafeHeading)", \(row): `\(type)` (\(stated)), but \
                    \(places[type] ?? "Sources/ (no such type has the attribute)") has \(actual): write `\(type)` (\(actual))
                    """
                )
            }
            let actualTotal = types.map { counts[$0.type, default: 0] }.reduce(0, +)
            #expect(
                total == actualTotal,
                """
                \(ArchitectureDocument.path), "\(Self.unsafeHeading)", \(row): its total is \(total), but its types carry \
                \(actualTotal) attributes in the code: write \(actualTotal)
                """
            )
        }
        let listed = Set((workerTypes + mockTypes).map(\.type))
        for (type, count) in counts.sorted(by: { $0.key < $1.key }) where !listed.contains(type) {
            Issue.record(
                """
                \(places[type] ?? type): `\(type)` has \(count) `@exclusivity(unchecked)` attributes the table of \
                \(ArchitectureDocument.path), "\(Self.unsafeHeading)", does not list: add `\(type)` (\(count)) to the worker's \
                row or the mock's, and its count to the row's total (and say what proves it right)
                """
            )
        }
    }

    /// The lifecycle table's services, in its order, are the ones `pushline run` builds its group
    /// from (`WorkerServiceList` says how the code is read), and the rows marked "(several apps
    /// only)" are the ones only a worker with several apps runs. Its `#` column counts 1, 2, 3…
    @Test func theLifecycleTableListsTheServiceGroupInOrder() throws {
        let rows = try ArchitectureDocument().table(under: Self.lifecycleHeading)
        var documented: [WorkerServiceList.Service] = []
        for (index, row) in rows.enumerated() {
            try #require(row.count >= 2, "\(ArchitectureDocument.path), \"\(Self.lifecycleHeading)\": row \(index + 1) has no service")
            #expect(
                row[0] == String(index + 1),
                "\(ArchitectureDocument.path), \"\(Self.lifecycleHeading)\": row \(index + 1) is numbered \(row[0]): number it \(index + 1)"
            )
            let type = try #require(
                ArchitectureDocument.codeSpans(row[1]).first,
                "\(ArchitectureDocument.path), \"\(Self.lifecycleHeading)\": row \(index + 1) names no `Service`"
            )
            documented.append(.init(type: type, severalAppsOnly: row[1].contains("(several apps only)")))
        }
        let code = try WorkerServiceList.fromCode(root: ArchitectureDocument.root)
        try #require(!code.isEmpty, "read no services from \(WorkerServiceList.runCommand)")
        #expect(
            documented == code,
            """
            \(ArchitectureDocument.path), "\(Self.lifecycleHeading)": the table lists \(documented.map(\.description)), but \
            \(WorkerServiceList.runCommand) and `Worker.services()` build the group from \(code.map(\.description)): make \
            the table's rows these services, in this order (each row's first `code span` names its service; mark a row \
            "(several apps only)" when only several apps run it), and say what each runs and does on shutdown
            """
        )
    }

    /// Every type the owner table's "its one owner" column names in backticks is declared under
    /// Sources/ (each component of `Job.Contents.dryRun` that is capitalised), and a member after
    /// the types (`dryRun`) is declared (`func`, `var`, `let` or `case`) in a file that declares or
    /// extends the last type. A lowercase name on its own is a member declared somewhere; a C
    /// function (`nghttp2_…`) appears in the code. Other spans (`idle → started → ended`) are prose.
    @Test func theOwnerTableNamesTypesAndMembersThatExist() throws {
        let sources = try ArchitectureDocument.sources()
        let types = Set(sources.flatMap { $0.types.map(\.name) })
        let rows = try ArchitectureDocument().table(under: Self.ownerHeading)
        try #require(rows.count > 10, "\(ArchitectureDocument.path), \"\(Self.ownerHeading)\": the table has \(rows.count) rows")
        for row in rows {
            try #require(row.count == 3, "\(ArchitectureDocument.path), \"\(Self.ownerHeading)\": \(row) has not 3 cells")
            let place = "\(ArchitectureDocument.path), \"\(Self.ownerHeading)\", the row for \"\(row[0].prefix(60))…\""
            for span in ArchitectureDocument.codeSpans(row[1]) {
                // `PoolConnections.capacities[slot].peerLimit`, `Worker.services()`: subscripts and calls dropped.
                let path = span.replacing(#/\[[^\]]*\]|\(\)/#, with: "")
                guard path.wholeMatch(of: #/[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*/#) != nil else { continue }
                let components = path.split(separator: ".").map(String.init)
                let typeNames = Array(components.prefix { $0.first?.isUppercase == true })
                let members = components.dropFirst(typeNames.count)
                if let last = typeNames.last {
                    for name in typeNames where !types.contains(name) {
                        Issue.record(
                            "\(place): `\(span)` names the type `\(name)`, which nothing under Sources/ declares: name the one owner the code has now"
                        )
                    }
                    guard types.contains(last), let member = members.first else { continue }
                    let files = sources.filter { $0.declaresOrExtends(last) }
                    #expect(
                        files.contains { $0.declaresMember(member) },
                        """
                        \(place): `\(span)`: no file of `\(last)` (\(files.map(\.path))) declares `\(member)`: name the member that \
                        holds this state now
                        """
                    )
                } else if components.count == 1, path.contains("_") {
                    #expect(
                        sources.contains { file in file.tokens.contains { $0.text == path } },
                        "\(place): `\(span)` is called nowhere under Sources/: name the call the code makes now"
                    )
                } else if components.count == 1 {
                    #expect(
                        sources.contains { $0.declaresMember(path) },
                        "\(place): no `func`, `var`, `let` or `case` `\(span)` is declared under Sources/: name the member the code has now"
                    )
                }
            }
        }
    }

    /// A comment that cites a section of docs/architecture.md (`(docs/architecture.md, "Lifecycle")`)
    /// names a heading the document has.
    @Test func commentsCiteSectionsTheDocumentHas() throws {
        let headings = Set(try ArchitectureDocument().headings)
        var paths = ["Package.swift"]
        for directory in ["Sources", "Tests"] {
            paths += SwiftSourceFile.paths(under: directory, root: ArchitectureDocument.root)
        }
        var cited = 0
        for path in paths {
            let text = try String(contentsOf: ArchitectureDocument.root.appendingPathComponent(path), encoding: .utf8)
            for match in text.matches(of: #/docs/architecture\.md,\s*(?:///?\s*)?"([^"]+)"/#) {
                cited += 1
                let section = String(match.output.1)
                #expect(
                    headings.contains(section),
                    "\(path) cites \(ArchitectureDocument.path), \"\(section)\", which has no such heading: cite one of \(headings.sorted())"
                )
            }
        }
        #expect(cited > 0, "no comment cites a section of \(ArchitectureDocument.path): is the pattern still right?")
    }

    // MARK: Reading the table

    /// The number `pattern` captures in `cell`.
    static func number(in cell: String, _ pattern: Regex<(Substring, Substring)>, row: String) throws -> Int {
        let match = try #require(
            cell.firstMatch(of: pattern),
            "\(ArchitectureDocument.path), \"\(unsafeHeading)\", \(row): no total in \"\(cell)\""
        )
        return try #require(Int(match.output.1))
    }

    /// Each "`Type` (count)" of `cell`.
    static func typeCounts(_ cell: String) -> [(type: String, count: Int)] {
        cell.matches(of: #/`(\w+)` \((\d+)\)/#).compactMap { match in
            Int(match.output.2).map { (type: String(match.output.1), count: $0) }
        }
    }
}
