import Foundation
import HTTPServer
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Every test starts its own server on a free loopback port and talks real HTTP to it.
@Suite(.timeLimit(.minutes(1)))
struct HTTPServerTests {
    /// The requests a handler was called with, in order.
    final class Recorder: Sendable {
        private let seen = Mutex<[HTTPRequest]>([])
        func record(_ request: HTTPRequest) { seen.withLock { $0.append(request) } }
        var requests: [HTTPRequest] { seen.withLock { $0 } }
    }

    @Test func oneAddressHoldsAtMostItsConnectionsAndAnIdleOneIsClosed() throws {
        var options = HTTPServer.Options()
        options.threads = 0
        options.maxConnectionsPerAddress = 4
        options.connectionTimeout = 2
        let server = try HTTPServer(options: options) { HTTPResponse(status: 200, text: "ok \($0.path)") }
        defer { server.stop() }
        // Four slow clients from 127.0.0.1, each one byte of a request line in.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<4 {
            let fd = try RawClient.connect(port: server.port)
            try RawClient.send(fd, Array("G".utf8))
            held.append(fd)
        }
        Thread.sleep(forTimeInterval: 0.2)
        // A fifth from the same address is closed unanswered.
        let refused = try? RawClient.exchange(port: server.port, RawClient.request("GET", "/fifth"))
        #expect(refused == nil, "\(refused.map { "\($0.status) \($0.text)" } ?? "")")
        // One gone, the next is served.
        close(held.removeLast())
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try RawClient.exchange(port: server.port, RawClient.request("GET", "/next")).text == "ok /next")
        // The idle ones are closed after the idle timeout (2 s): their reads end.
        let started = Date()
        for fd in held { _ = try? RawClient.receiveAll(fd) }
        let waited = Date().timeIntervalSince(started)
        #expect(waited < 4.5, "\(waited) s")
        #expect(try RawClient.exchange(port: server.port, RawClient.request("GET", "/after")).text == "ok /after")
    }

    @Test func aRequestWhoseBodyTricklesPastTheDeadlineIsClosedUnanswered() throws {
        var options = HTTPServer.Options()
        options.threads = 0
        options.requestDeadline = 1
        let recorder = Recorder()
        let server = try HTTPServer(options: options) { request in
            recorder.record(request)
            return HTTPResponse(status: 200, text: "ok")
        }
        defer { server.stop() }
        // Headers at once, then a byte of the body every 0.3 s: never idle, past 1 s at the 4th.
        let fd = try RawClient.connect(port: server.port)
        defer { close(fd) }
        try RawClient.send(fd, Array("POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8\r\nConnection: close\r\n\r\n".utf8))
        let started = Date()
        for _ in 0..<8 {
            Thread.sleep(forTimeInterval: 0.3)
            do { try RawClient.send(fd, [0x61]) } catch { break }
        }
        let answer = (try? RawClient.receiveAll(fd)) ?? []
        #expect(answer.isEmpty, "\(String(decoding: answer, as: UTF8.self))")
        #expect(recorder.requests.isEmpty)
        #expect(Date().timeIntervalSince(started) < 5)
        // A request in time is served.
        #expect(try RawClient.exchange(port: server.port, RawClient.request("POST", "/quick", body: Array("12345678".utf8))).status == 200)
    }

    @Test func headersThatTricklePastTheDeadlineCloseTheConnection() throws {
        var options = HTTPServer.Options()
        options.threads = 0
        options.requestDeadline = 1
        let recorder = Recorder()
        let server = try HTTPServer(options: options) { request in
            recorder.record(request)
            return HTTPResponse(status: 200, text: "ok")
        }
        defer { server.stop() }
        // The first line, then a header a byte every 0.2 s: never idle, never complete.
        let fd = try RawClient.connect(port: server.port)
        defer { close(fd) }
        try RawClient.send(fd, Array("GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
        let started = Date()
        var cut = false
        for _ in 0..<40 {
            Thread.sleep(forTimeInterval: 0.2)
            do { try RawClient.send(fd, [0x61]) } catch {
                cut = true
                break
            }
        }
        #expect(cut, "the connection was still open after 8 s")
        #expect(Date().timeIntervalSince(started) < 4)
        #expect(recorder.requests.isEmpty)
        // A request in time is served, on the same server.
        #expect(try RawClient.exchange(port: server.port, RawClient.request("GET", "/quick")).status == 200)
    }

    @Test func aGetReachesTheHandlerExactlyAndItsAnswerIsSent() throws {
        let recorder = Recorder()
        let server = try HTTPServer { request in
            recorder.record(request)
            return HTTPResponse(status: 201, text: "made \(request.path)", headers: [("X-Reply", "yes"), ("Content-Length", "999")])
        }
        defer { server.stop() }
        #expect(server.port != 0)
        #expect(server.endpoint == "127.0.0.1:\(server.port)")

        let response = try RawClient.exchange(
            port: server.port,
            RawClient.request(
                "GET", "/ledgers/a%2Fb/events?since=5&name=a%20b&since=6", headers: [("X-Custom-Header", "Value One"), ("ACCEPT", "*/*")]))
        #expect(response.status == 201)
        #expect(response.text == "made /ledgers/a%2Fb/events")
        #expect(response.header("X-Reply") == "yes")
        #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(response.header("Content-Length") == "\(response.body.count)")  // from the body, not the handler's 999

        let plain = try RawClient.exchange(port: server.port, RawClient.request("GET", "/"))
        #expect(plain.status == 201)

        let requests = recorder.requests
        try #require(requests.count == 2)
        let first = requests[0]
        #expect(first.method == "GET")
        #expect(first.path == "/ledgers/a%2Fb/events")
        #expect(first.query == "since=5&name=a%20b&since=6")
        #expect(first.headers.map(\.name) == ["host", "x-custom-header", "accept", "connection"])
        #expect(first.headers.map(\.value) == ["127.0.0.1", "Value One", "*/*", "close"])
        #expect(first.header("X-CUSTOM-HEADER") == "Value One")
        #expect(first.header("missing") == nil)
        #expect(first.body.isEmpty)
        #expect(first.remoteAddress == "127.0.0.1")
        #expect(requests[1].path == "/")
        #expect(requests[1].query == nil)
    }

    @Test func aPostsBodyArrivesByteForByteWhetherSizedOrChunked() throws {
        let recorder = Recorder()
        let server = try HTTPServer { request in
            recorder.record(request)
            return HTTPResponse(status: 200, bytes: request.body, headers: [("X-Method", request.method)])
        }
        defer { server.stop() }
        // Every byte value, NULs and invalid UTF-8 included, and more than one read's worth.
        let body = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }

        let sized = try RawClient.exchange(
            port: server.port,
            RawClient.request(
                "POST", "/events?batch=1", headers: [("Content-Type", "application/octet-stream"), ("X-Device", "d1")], body: body))
        #expect(sized.status == 200)
        #expect(sized.body == body)
        #expect(sized.header("Content-Type") == "application/octet-stream")
        #expect(sized.header("X-Method") == "POST")

        let chunked = try RawClient.exchange(
            port: server.port,
            RawClient.request("PUT", "/chunked", headers: [("Transfer-Encoding", "chunked")], body: RawClient.chunked(body, size: 10_000)))
        #expect(chunked.status == 200)
        #expect(chunked.body == body)

        let requests = recorder.requests
        try #require(requests.count == 2)
        #expect(requests[0].method == "POST")
        #expect(requests[0].path == "/events")
        #expect(requests[0].query == "batch=1")
        #expect(requests[0].headers.map(\.name) == ["host", "content-type", "x-device", "content-length", "connection"])
        #expect(requests[0].header("content-length") == "70000")
        #expect(requests[0].body == body)
        #expect(requests[1].method == "PUT")
        #expect(requests[1].body == body)
    }

    @Test func aBodyOverTheLimitIsAnswered413WithoutCallingTheHandler() throws {
        let recorder = Recorder()
        let server = try HTTPServer(options: .init(maxBodyBytes: 1000)) { request in
            recorder.record(request)
            return HTTPResponse(text: "took \(request.body.count)")
        }
        defer { server.stop() }

        // Declared too large: answered before the body is sent.
        let declared = try RawClient.exchange(
            port: server.port, RawClient.request("POST", "/declared", headers: [("Content-Length", "5000"), ("Expect", "100-continue")]))
        #expect(declared.status == 413)
        #expect(declared.text.contains("1000 bytes"))

        // Chunked, so its size shows only as it arrives.
        let chunked = try RawClient.exchange(
            port: server.port,
            RawClient.request(
                "POST", "/chunked", headers: [("Transfer-Encoding", "chunked")],
                body: RawClient.chunked([UInt8](repeating: 1, count: 1500), size: 300)))
        #expect(chunked.status == 413)

        #expect(recorder.requests.isEmpty)

        // The limit itself is accepted.
        let exact = try RawClient.exchange(port: server.port, RawClient.request("POST", "/exact", body: [UInt8](repeating: 2, count: 1000)))
        #expect(exact.status == 200)
        #expect(exact.text == "took 1000")
        #expect(recorder.requests.map(\.path) == ["/exact"])
    }

    @Test func fiftyConcurrentRequestsAreAllAnsweredCorrectly() throws {
        let recorder = Recorder()
        let server = try HTTPServer { request in
            recorder.record(request)
            return HTTPResponse(text: "\(request.path):" + String(decoding: request.body, as: UTF8.self))
        }
        defer { server.stop() }
        let count = 50
        let results = Mutex<[Int: Result<RawClient.Response, any Error>]>([:])
        let done = DispatchGroup()
        let started = ContinuousClock.now
        for i in 0..<count {
            done.enter()
            let thread = Thread {
                let result = Result {
                    try RawClient.exchange(port: server.port, RawClient.request("POST", "/r\(i)", body: Array("body \(i)".utf8)))
                }
                results.withLock { $0[i] = result }
                done.leave()
            }
            thread.start()
        }
        #expect(done.wait(timeout: .now() + 20) == .success)
        let elapsed = ContinuousClock.now - started
        let answered = results.withLock { $0 }
        #expect(answered.count == count)
        for i in 0..<count {
            let response = try #require(try answered[i]?.get())
            #expect(response.status == 200)
            #expect(response.text == "/r\(i):body \(i)")
        }
        #expect(Set(recorder.requests.map(\.path)) == Set((0..<count).map { "/r\($0)" }))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("HTTPServerTests: \(count) concurrent requests in \(Int(seconds * 1000)) ms, \(Int(Double(count) / seconds)) requests/s")
        // Every request begun was reported completed (which is where its state is released).
        #expect(waitUntil { server.requestsInFlight == 0 })
    }

    @Test func requestsOnOneKeptAliveConnectionEachGetTheirOwnBody() throws {
        let recorder = Recorder()
        let server = try HTTPServer { request in
            recorder.record(request)
            return HTTPResponse(text: "\(request.method) \(request.path) \(request.body.count)")
        }
        defer { server.stop() }
        let fd = try RawClient.connect(port: server.port)
        defer { close(fd) }
        // Three requests sent at once, the first two keeping the connection open.
        try RawClient.send(
            fd,
            RawClient.request("POST", "/one", body: Array(repeating: 1, count: 10), keepAlive: true)
                + RawClient.request("POST", "/two", body: Array(repeating: 2, count: 3), keepAlive: true)
                + RawClient.request("GET", "/three"))
        let responses = try RawClient.parseAll(try RawClient.receiveAll(fd), expecting: 3)
        #expect(responses.map(\.text) == ["POST /one 10", "POST /two 3", "GET /three 0"])
        #expect(recorder.requests.map(\.body) == [Array(repeating: 1, count: 10), Array(repeating: 2, count: 3), []])
        #expect(waitUntil { server.requestsInFlight == 0 })
    }

    @Test func blockingHandlersRunSideBySide() throws {
        // A thread for each connection: eight handlers that each block 200 ms take about 200 ms in all.
        let perConnection = try HTTPServer(options: .init(threads: 0)) { _ in
            usleep(200_000)
            return HTTPResponse(text: "done")
        }
        let tookPerConnection = try timeConcurrentRequests(8, port: perConnection.port)
        perConnection.stop()
        #expect(tookPerConnection < .milliseconds(1000))
        // The default pool of four threads: at most four at once.
        let pooled = try HTTPServer { _ in
            usleep(200_000)
            return HTTPResponse(text: "done")
        }
        let tookPooled = try timeConcurrentRequests(8, port: pooled.port)
        pooled.stop()
        #expect(tookPooled >= .milliseconds(390))
        print(
            "HTTPServerTests: 8 requests blocking 200 ms each: \(tookPerConnection) with a thread per connection, "
                + "\(tookPooled) with a pool of 4")
    }

    /// Sends `count` GET requests at once, each from its own thread; how long until all were answered 200.
    func timeConcurrentRequests(_ count: Int, port: UInt16) throws -> Duration {
        let failures = Mutex<[String]>([])
        let done = DispatchGroup()
        let started = ContinuousClock.now
        for i in 0..<count {
            done.enter()
            Thread {
                do {
                    let response = try RawClient.exchange(port: port, RawClient.request("GET", "/\(i)"))
                    if response.status != 200 { failures.withLock { $0.append("request \(i): status \(response.status)") } }
                } catch {
                    failures.withLock { $0.append("request \(i): \(error)") }
                }
                done.leave()
            }.start()
        }
        try #require(done.wait(timeout: .now() + 10) == .success)
        let took = ContinuousClock.now - started
        #expect(failures.withLock { $0 } == [])
        return took
    }

    /// Whether `condition` holds within two seconds.
    func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(2)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    @Test func aNonLoopbackHostWithoutTLSIsRefused() throws {
        for host in ["0.0.0.0", "192.0.2.10", "::", "[2001:db8::1]"] {
            let error = #expect(throws: HTTPServerError.self) { try HTTPServer(options: .init(host: host)) { _ in HTTPResponse() } }
            #expect(error?.kind == .plainRemoteRefused)
            #expect(error?.description.contains("not a loopback address") == true)
        }
        let named = #expect(throws: HTTPServerError.self) { try HTTPServer(options: .init(host: "localhost")) { _ in HTTPResponse() } }
        #expect(named?.kind == .invalidOptions)
        #expect(named?.description.contains("numeric IPv4 or IPv6 address") == true)
        // Allowed explicitly, it gets as far as binding, which fails: this machine has no such address.
        let unbound = #expect(throws: HTTPServerError.self) {
            try HTTPServer(options: .init(host: "192.0.2.10", allowPlainRemote: true)) { _ in HTTPResponse() }
        }
        #expect(unbound?.kind == .startFailed)
        #expect(unbound?.description.hasPrefix("could not start the HTTP server on 192.0.2.10:0") == true)
        print("HTTPServerTests: an address not on this machine: \(unbound?.description ?? "")")
    }

    @Test func aPortInUseIsAClearError() throws {
        let first = try HTTPServer { _ in HTTPResponse() }
        defer { first.stop() }
        let error = #expect(throws: HTTPServerError.self) { try HTTPServer(options: .init(port: first.port)) { _ in HTTPResponse() } }
        #expect(error?.kind == .startFailed)
        #expect(error?.description.contains("127.0.0.1:\(first.port)") == true)
        #expect(error?.description.lowercased().contains("in use") == true)
        print("HTTPServerTests: a port in use: \(error?.description ?? "")")
    }

    @Test func itListensOnIPv6Loopback() throws {
        let server = try HTTPServer(options: .init(host: "::1")) { request in HTTPResponse(text: request.remoteAddress) }
        defer { server.stop() }
        #expect(server.endpoint == "[::1]:\(server.port)")
        let response = try RawClient.exchange(port: server.port, host: "::1", RawClient.request("GET", "/", host: "[::1]"))
        #expect(response.text == "::1")
        // Bound to ::1 only: the IPv4 loopback on the same port is not served.
        #expect(throws: RawClient.Failure.self) { try RawClient.connect(port: server.port, host: "127.0.0.1") }
    }

    @Test func itServesHTTPSWithTheGivenCertificate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let made = try run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-days", "1",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
            ])
        try #require(made.status == 0, "openssl: \(made.output)")
        let tls = HTTPServer.TLS(
            certificatePEM: try String(contentsOfFile: certificate, encoding: .utf8),
            keyPEM: try String(contentsOfFile: key, encoding: .utf8))

        let recorder = Recorder()
        let server = try HTTPServer(options: .init(tls: tls)) { request in
            recorder.record(request)
            return HTTPResponse(text: "secret \(request.method) \(String(decoding: request.body, as: UTF8.self))")
        }
        defer { server.stop() }
        // curl checks the chain and the name against the certificate itself, not -k.
        let fetched = try run(
            "curl",
            [
                "-sS", "--max-time", "5", "--cacert", certificate, "--resolve", "localhost:\(server.port):127.0.0.1",
                "--data-binary", "over tls", "https://localhost:\(server.port)/secure?x=1",
            ])
        #expect(fetched.status == 0, "curl: \(fetched.output)")
        #expect(fetched.output == "secret POST over tls")
        #expect(recorder.requests.map(\.path) == ["/secure"])
        #expect(recorder.requests.first?.query == "x=1")

        // Plain HTTP to the TLS port gets no HTTP answer.
        let plain = try run("curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(server.port)/"])
        #expect(plain.status != 0)

        // With TLS, a non-loopback host passes the plain-HTTP check (and then fails to bind here).
        let remote = #expect(throws: HTTPServerError.self) {
            try HTTPServer(options: .init(host: "192.0.2.10", tls: tls)) { _ in HTTPResponse() }
        }
        #expect(remote?.kind == .startFailed)

        // A key that is no key is refused when starting, with libmicrohttpd's reason.
        let broken = HTTPServer.TLS(
            certificatePEM: tls.certificatePEM, keyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        let refused = #expect(throws: HTTPServerError.self) { try HTTPServer(options: .init(tls: broken)) { _ in HTTPResponse() } }
        #expect(refused?.kind == .startFailed)
        print("HTTPServerTests: a broken key: \(refused?.description ?? "")")
    }

    @Test func stopFinishesARequestInFlightThenRefusesConnections() throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let server = try HTTPServer { request in
            if request.path == "/slow" {
                entered.signal()
                _ = release.wait(timeout: .now() + 5)  // until the test has seen the server stopping
                usleep(300_000)
                return HTTPResponse(text: "slow done")
            }
            return HTTPResponse(text: "quick")
        }
        let port = server.port
        #expect(try RawClient.exchange(port: port, RawClient.request("GET", "/quick")).text == "quick")

        let slow = Mutex<Result<RawClient.Response, any Error>?>(nil)
        let slowDone = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { try RawClient.exchange(port: port, RawClient.request("GET", "/slow")) }
            slow.withLock { $0 = result }
            slowDone.signal()
        }.start()
        try #require(entered.wait(timeout: .now() + 5) == .success)

        let stopped = DispatchSemaphore(value: 0)
        let stopTook = Mutex<Duration>(.zero)
        Thread {
            let start = ContinuousClock.now
            server.stop()
            stopTook.withLock { $0 = ContinuousClock.now - start }
            stopped.signal()
        }.start()
        // While it stops, new connections are refused at once, and the request in flight goes on.
        #expect(waitUntil { (try? RawClient.connect(port: port)).map { close($0) } == nil })
        let during = #expect(throws: RawClient.Failure.self) { try RawClient.connect(port: port) }
        #expect(during?.isRefused == true)
        #expect(stopped.wait(timeout: .now()) == .timedOut)
        release.signal()

        try #require(slowDone.wait(timeout: .now() + 5) == .success)
        try #require(stopped.wait(timeout: .now() + 5) == .success)
        let response = try #require(try slow.withLock { $0 }?.get())
        #expect(response.status == 200)
        #expect(response.text == "slow done")
        let took = stopTook.withLock { $0 }
        #expect(took >= .milliseconds(300) && took < .seconds(3))
        print("HTTPServerTests: stop() took \(took) with a request in flight that had 300 ms to go")

        let after = #expect(throws: RawClient.Failure.self) { try RawClient.connect(port: port) }
        #expect(after?.isRefused == true)
        #expect(server.requestsInFlight == 0)
        server.stop()  // again: harmless
    }

    @Test func stopGivesUpWaitingAfterTheGracePeriod() throws {
        let entered = DispatchSemaphore(value: 0)
        let server = try HTTPServer { _ in
            entered.signal()
            usleep(1_000_000)
            return HTTPResponse(text: "too late")
        }
        let port = server.port
        let outcome = Mutex<Result<RawClient.Response, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { try RawClient.exchange(port: port, RawClient.request("GET", "/")) }
            outcome.withLock { $0 = result }
            done.signal()
        }.start()
        try #require(entered.wait(timeout: .now() + 5) == .success)
        let start = ContinuousClock.now
        server.stop(gracePeriod: .milliseconds(200))
        let took = ContinuousClock.now - start
        // The daemon's stop still waits for the handler to return, but the request is not answered.
        #expect(took >= .milliseconds(200) && took < .seconds(3))
        try #require(done.wait(timeout: .now() + 5) == .success)
        let answered = try? outcome.withLock { $0 }?.get()
        #expect(answered?.text != "too late")
        print("HTTPServerTests: stop(gracePeriod: 200 ms) took \(took) with a handler blocking 1 s")
    }

    /// Runs a command to its end; its standard output, or its standard error if that is empty.
    func run(_ command: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: out.isEmpty ? err : out, as: UTF8.self)
        return (process.terminationStatus, text)
    }
}
