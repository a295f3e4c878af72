import Testing

@testable import PushlineTLS

@Suite struct TLSHandlerStateMachineTests {
    @Test func writesAndFlushesBeforeHandshakeAreDeferred() {
        var machine = TLSHandlerStateMachine()
        #expect(machine.write() == .buffer)
        #expect(machine.flush() == .deferUntilHandshakeCompletes)
        #expect(machine.activate() == true)
        #expect(machine.activate() == false, "activating twice starts one handshake")
        #expect(machine.ciphertextReceived() == .handshake)
        #expect(machine.flush() == .deferUntilHandshakeCompletes)
        #expect(machine.handshakeCompleted() == true)
        #expect(machine.state == .active)
        #expect(machine.flush() == .encryptAndFlush)
        #expect(machine.ciphertextReceived() == .readApplicationData)
    }

    @Test func handshakeWithoutDeferredFlushDoesNotFlush() {
        var machine = TLSHandlerStateMachine()
        _ = machine.activate()
        #expect(machine.handshakeCompleted() == false)
    }

    @Test func closeDuringHandshakeClosesNow() {
        var machine = TLSHandlerStateMachine()
        _ = machine.activate()
        #expect(machine.closeRequested() == .closeNow)
        #expect(machine.state == .closed)
        #expect(machine.write() == .fail)
        #expect(machine.ciphertextReceived() == .discard)
        #expect(machine.channelInactive() == .clean)
    }

    @Test func activeCloseSendsCloseNotifyAndJoinsLaterCloses() {
        var machine = TLSHandlerStateMachine()
        _ = machine.activate()
        _ = machine.handshakeCompleted()
        #expect(machine.closeRequested() == .sendCloseNotifyThenClose)
        #expect(machine.closeRequested() == .joinClose)
        #expect(machine.write() == .fail)
        #expect(machine.flush() == .ignore)
        // The peer's answering close_notify is still read, and needs no reply.
        #expect(machine.ciphertextReceived() == .readApplicationData)
        #expect(machine.closeNotifyReceived() == .alreadyClosing)
        #expect(machine.channelInactive() == .clean)
    }

    @Test func peerCloseNotifyIsAnswered() {
        var machine = TLSHandlerStateMachine()
        _ = machine.activate()
        _ = machine.handshakeCompleted()
        #expect(machine.closeNotifyReceived() == .replyThenClose)
        #expect(machine.state == .closing)
        #expect(machine.channelInactive() == .clean)
    }

    @Test func eofWithoutCloseNotifyIsUnclean() {
        var active = TLSHandlerStateMachine()
        _ = active.activate()
        _ = active.handshakeCompleted()
        #expect(active.channelInactive() == .uncleanShutdown)

        var handshaking = TLSHandlerStateMachine()
        _ = handshaking.activate()
        #expect(handshaking.channelInactive() == .uncleanShutdown)
    }

    @Test func failureFiresOnce() {
        var machine = TLSHandlerStateMachine()
        _ = machine.activate()
        #expect(machine.failed() == .fireErrorAndClose)
        #expect(machine.failed() == .ignore)
        #expect(machine.channelInactive() == .clean)
    }
}
