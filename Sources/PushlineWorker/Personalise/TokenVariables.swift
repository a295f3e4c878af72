/// The `vars` of a personalised job's tokens that its template reads, in one table: a row per
/// token, a column per template name (`PayloadTemplate.names`), each cell the value's bytes in
/// one buffer for the job (no dictionary or `String` per token).
///
/// A value's bytes are what the render inserts: a string's as written between its quotes
/// (already JSON-escaped, and validated by the decoder's scan, so it cannot end the string it is
/// copied into), a number's or boolean's text. A `null` or missing variable has no cell value.
/// Variables the template does not read are not kept.
struct TokenVariables: Sendable, Hashable {
    let tokens: Int
    let names: Int
    /// Every kept value, back to back.
    private let values: [UInt8]
    /// Two per cell (token-major): the value's start and end in `values`; start -1 = none. Empty
    /// when no token has a variable the template reads.
    private let cells: [Int32]

    init(tokens: Int, names: Int, values: [UInt8], cells: [Int32]) {
        precondition(cells.isEmpty || cells.count == tokens * names * 2, "\(cells.count) cells for \(tokens) x \(names)")
        self.tokens = tokens
        self.names = names
        self.values = values
        self.cells = cells
    }

    /// No token has any variable.
    init(tokens: Int, names: Int) {
        self.init(tokens: tokens, names: names, values: [], cells: [])
    }

    /// Calls `body` with the raw tables (cells and values), empty cells meaning no variables.
    func withTables<Result>(_ body: (_ cells: UnsafeBufferPointer<Int32>, _ values: UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        cells.withUnsafeBufferPointer { cells in values.withUnsafeBufferPointer { values in body(cells, values) } }
    }

    /// Token `token`'s value of name `name`, as bytes (nil: none).
    func value(token: Int, name: Int) -> [UInt8]? {
        guard !cells.isEmpty else { return nil }
        let cell = (token * names + name) * 2
        guard cells[cell] >= 0 else { return nil }
        return Array(values[Int(cells[cell])..<Int(cells[cell + 1])])
    }

    /// The rows of `indices` (ascending), for a job resumed with those tokens only.
    func narrowed(to indices: [Int]) -> TokenVariables {
        guard !cells.isEmpty else { return TokenVariables(tokens: indices.count, names: names) }
        var kept: [Int32] = []
        kept.reserveCapacity(indices.count * names * 2)
        for index in indices {
            kept.append(contentsOf: cells[(index * names * 2)..<((index + 1) * names * 2)])
        }
        return TokenVariables(tokens: indices.count, names: names, values: values, cells: kept)
    }
}
