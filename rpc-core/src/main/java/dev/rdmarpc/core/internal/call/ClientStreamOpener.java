package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.internal.channel.ChannelImpl;
import dev.rdmarpc.core.internal.channel.ClientConnection;
import dev.rdmarpc.core.protocol.FrameTooLargeException;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Future;

/**
 * Opens one client stream on a connection: takes the channel's connection (or waits for it to connect), opens the
 * stream there, or queues it in the connection's waiting queue while the server's concurrent-stream limit is reached,
 * and tries another connection when one takes no new streams (up to three more). What the stream does once open, or
 * when it cannot open, is the stream's ({@link ClientStream#openedLocked}, {@link ClientStream#failLocked}). Its state
 * (the connection it waits on, the attempt) is guarded by the stream's lock. A reserved slot the stream cannot use goes
 * back to the connection only once the stream's lock is released: the connection hands it to the next waiting stream
 * at once, which opens (and may run its callbacks) on this thread, and no stream's lock is taken inside another's.
 */
final class ClientStreamOpener {
    /** Connections tried after the first when one takes no new streams. */
    private static final int RETRIES = 3;

    private final ChannelImpl channel;
    private final ClientStream<?, ?> stream;
    /** The connection the stream is queued on for a stream slot, or null. */
    private ClientConnection waitingOn;
    /** Connection attempts made so far (a stream sent to another connection counts one more). */
    private int attempt;

    ClientStreamOpener(ChannelImpl channel, ClientStream<?, ?> stream) {
        this.channel = channel;
        this.stream = stream;
    }

    /**
     * Without the stream's lock: opens the stream on the channel's connection ({@code tries}: 0 for the first attempt).
     * A connection already made is opened on here, not through {@link #attach}: each call on the way from the
     * application's call to the HEADERS frame's bytes is one level of the JIT's inlining (PERFORMANCE.md, "Inlining
     * depth").
     */
    void connect(int tries) {
        CompletableFuture<ClientConnection> f = channel.connection();
        if (f.state() == Future.State.SUCCESS) {
            if (!openOn(f.resultNow(), tries, false, tries == 0)) {
                connectAgain(tries);
            }
        } else if (f.isDone()) {
            attach(null, f.isCancelled() ? new CancellationException("connect cancelled") : f.exceptionNow(), tries, false);
        } else {
            f.whenComplete((c, e) -> attach(c, e, tries, false)); // the future keeps a reference until it completes
        }
    }

    /** {@code inline}: on the caller's thread, on the first connection asked (the allow-listed step of recycling). */
    private void attach(ClientConnection c, Throwable error, int tries, boolean inline) {
        if (error != null) {
            if (error instanceof CompletionException && error.getCause() != null) {
                error = error.getCause();
            }
            Status s = Status.fromThrowable(error);
            if (s.getCode() == Status.Code.UNKNOWN) {
                s = Status.UNAVAILABLE.withDescription("cannot connect to " + channel.authority() + ": " + error).withCause(error);
            }
            stream.fail(s);
            return;
        }
        if (!openOn(c, tries, false, inline)) {
            connectAgain(tries);
        }
    }

    /**
     * Opens the stream on {@code c}, or queues it there for a slot under the server's concurrent-stream limit
     * ({@code reserved}: a slot is already held for it). Returns false when {@code c} takes no new streams.
     */
    private boolean openOn(ClientConnection c, int tries, boolean reserved, boolean inline) {
        boolean run = false;
        boolean handled = true;
        boolean unusedSlot = false;
        synchronized (stream) {
            waitingOn = null;
            attempt = tries;
            Status refused = stream.isClosedLocked() ? null : stream.metadataRefusalLocked(c);
            if (stream.isClosedLocked()) {
                unusedSlot = reserved;
            } else if (refused != null) {
                unusedSlot = reserved;
                run = stream.failLocked(refused);
            } else {
                int result;
                try {
                    result = c.open(stream, stream.headersGoAloneLocked(), reserved);
                } catch (FrameTooLargeException e) {
                    // nothing was sent and no stream id taken: the call fails here alone (a reserved slot stays held)
                    result = ClientConnection.QUEUED;
                    unusedSlot = reserved;
                    run = stream.failLocked(Status.INTERNAL.withDescription(e.getMessage() + " (the call was not sent)"));
                }
                if (result == ClientConnection.QUEUED) {
                    if (!stream.isClosedLocked()) {
                        waitingOn = c;
                    }
                } else if (result == ClientConnection.OPENED) {
                    run = stream.openedLocked(c, inline);
                } else {
                    handled = false;
                }
            }
        }
        if (unusedSlot) {
            c.releaseSlot();
        }
        if (run) {
            stream.afterUnlock();
        }
        return handled;
    }

    private void connectAgain(int tries) {
        if (tries < RETRIES) {
            connect(tries + 1);
        } else {
            stream.fail(Status.UNAVAILABLE.withDescription("no connection to " + channel.authority() + " accepts new calls"));
        }
    }

    /** The connection the stream waited on reserved it a slot: open it there now. */
    void slotReady(ClientConnection c) {
        int tries;
        synchronized (stream) {
            tries = attempt;
        }
        if (!openOn(c, tries, true, false)) {
            connectAgain(tries);
        }
    }

    /** The connection the stream waited on closed or is going away before the stream was sent: use another one. */
    void retryElsewhere() {
        int tries;
        synchronized (stream) {
            if (stream.isClosedLocked()) {
                return;
            }
            waitingOn = null;
            tries = attempt;
        }
        connectAgain(tries);
    }

    /** With the stream's lock held, as the call ends: leaves the queue it waits in, if any. */
    void stopWaitingLocked() {
        if (waitingOn != null) {
            // not waiting any more: either removed here, or a slot is being handed to it and slotReady passes it on
            waitingOn.stopWaiting(stream);
            waitingOn = null;
        }
    }

    /**
     * With the stream's lock held: where the stream is, for a message: on {@code conn} (null while not open), waiting
     * for a slot, or not yet connected.
     */
    String whereLocked(ClientConnection conn) {
        return conn != null ? " [remote_addr=" + conn.peer() + "]"
                : waitingOn != null ? " (waiting for one of the " + waitingOn.peerLimits().maxConcurrentStreams()
                + " concurrent streams the server at " + channel.authority() + " allows)"
                : " (not yet connected to " + channel.authority() + ")";
    }

    /** With the stream's lock held, when the stream is recycled: as a new opener. */
    void resetLocked() {
        assert waitingOn == null : "recycled while waiting for a slot: " + stream;
        attempt = 0;
    }
}
