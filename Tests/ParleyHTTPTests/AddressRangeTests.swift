import ParleyHTTP
import XCTest

/// PARLEY_TRUSTED_PROXIES entries: IPv4 and IPv6 CIDRs and single addresses.
final class AddressRangeTests: XCTestCase {
    private func range(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> AddressRange {
        try XCTUnwrap(AddressRange(text), "\(text) parses", file: file, line: line)
    }

    func testAnIPv4CIDRHoldsExactlyItsBlock() throws {
        let tens = try range("10.0.0.0/8")
        XCTAssertTrue(tens.contains("10.0.0.0"))
        XCTAssertTrue(tens.contains("10.255.255.255"))
        XCTAssertFalse(tens.contains("11.0.0.0"))
        XCTAssertFalse(tens.contains("9.255.255.255"))
        let odd = try range("192.168.4.0/22")
        XCTAssertTrue(odd.contains("192.168.7.200"))
        XCTAssertFalse(odd.contains("192.168.8.1"))
        XCTAssertFalse(odd.contains("192.168.3.255"))
    }

    func testASingleAddressIsAFullLengthPrefix() throws {
        let one = try range(" 127.0.0.2 ")
        XCTAssertEqual(one.prefixLength, 32)
        XCTAssertTrue(one.contains("127.0.0.2"))
        XCTAssertFalse(one.contains("127.0.0.3"))
        let six = try range("::1")
        XCTAssertEqual(six.prefixLength, 128)
        XCTAssertTrue(six.contains("::1"))
        XCTAssertTrue(six.contains("0:0:0:0:0:0:0:1"), "any spelling of the same address")
        XCTAssertFalse(six.contains("::2"))
    }

    func testIPv6CIDRs() throws {
        let local = try range("fd00::/8")
        XCTAssertTrue(local.contains("fd12:3456::1"))
        XCTAssertFalse(local.contains("fe80::1"))
        let loopback = try range("::1/128")
        XCTAssertTrue(loopback.contains("::1"))
        XCTAssertTrue(try range("fe80::/10").contains("fe80::1%eth0"), "a zone is not part of the address")
    }

    func testFamiliesDoNotMixExceptIPv4MappedAddresses() throws {
        XCTAssertFalse(try range("0.0.0.0/0").contains("::1"))
        XCTAssertFalse(try range("::/0").contains("127.0.0.1"))
        XCTAssertTrue(try range("10.0.0.0/8").contains("::ffff:10.1.2.3"),
                      "an IPv4 client on a dual-stack socket is its IPv4 address")
        XCTAssertFalse(try range("10.0.0.0/8").contains("::ffff:11.1.2.3"))
    }

    func testZeroPrefixHoldsEveryAddressOfItsFamily() throws {
        XCTAssertTrue(try range("0.0.0.0/0").contains("203.0.113.9"))
        XCTAssertTrue(try range("::/0").contains("2001:db8::1"))
    }

    func testHostBitsPastThePrefixAreIgnored() throws {
        XCTAssertEqual(try range("10.1.2.3/8"), try range("10.0.0.0/8"))
        XCTAssertEqual(try range("10.1.2.3/8").description, "10.0.0.0/8")
        XCTAssertEqual(try range("2001:db8::1/32").description, "2001:db8::/32")
    }

    func testNonsenseIsRefused() {
        for text in ["", "localhost", "10.0.0.0/33", "::1/129", "10.0.0.0/-1", "10.0.0.0/", "10.0.0/8", "10.0.0.0/8/8",
                     "1.2.3.4.5", "10.0.0.0/ 8", "::g"] {
            XCTAssertNil(AddressRange(text), text)
        }
        XCTAssertFalse(AddressRange("10.0.0.0/8")!.contains(""), "an unknown peer address is never trusted")
        XCTAssertFalse(AddressRange("10.0.0.0/8")!.contains("not an address"))
    }

    func testAListMatchesWhenAnyRangeDoes() throws {
        let list = try ["10.0.0.0/8", "127.0.0.2", "::1/128"].map { try range($0) }
        XCTAssertTrue(list.contains(address: "10.9.8.7"))
        XCTAssertTrue(list.contains(address: "127.0.0.2"))
        XCTAssertTrue(list.contains(address: "::1"))
        XCTAssertFalse(list.contains(address: "127.0.0.1"))
        XCTAssertFalse([AddressRange]().contains(address: "127.0.0.1"))
    }
}
