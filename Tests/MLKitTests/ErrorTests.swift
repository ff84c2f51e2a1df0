import TestSupport
import Testing
@testable import MLKit

@Suite("Error messages", .onOwnThreads)
struct ErrorMessageTests {
    @Test("A location prints as file:line:column, then record and field")
    func fullLocation() {
        let error = MLKitError(.wrongType, "expected a string, found a number",
                               at: .init(file: "texts.json", line: 3, column: 14, record: 2, field: "label"))
        #expect(error.description == "texts.json:3:14: record 2, field \"label\": expected a string, found a number")
    }

    @Test("An error without a location prints only its reason")
    func noLocation() {
        #expect(MLKitError(.invalidParameter, "bad").description == "bad")
    }
}
