package dev.rdmarpc.grpc;

import java.util.ArrayList;
import java.util.List;

/**
 * A client transport's started streams, linked through the streams themselves (no allocation per stream).
 * Not thread-safe: the transport's lock guards it and the streams' links.
 */
final class OpenStreams {
    private RdmaClientStream head;
    private int size;

    /** Adds a stream not already here. */
    void add(RdmaClientStream s) {
        s.listed = true;
        s.nextOpen = head;
        s.prevOpen = null;
        if (head != null) {
            head.prevOpen = s;
        }
        head = s;
        size++;
    }

    /** Removes the stream; false if it was not here. */
    boolean remove(RdmaClientStream s) {
        if (!s.listed) {
            return false;
        }
        s.listed = false;
        if (s.prevOpen != null) {
            s.prevOpen.nextOpen = s.nextOpen;
        } else {
            head = s.nextOpen;
        }
        if (s.nextOpen != null) {
            s.nextOpen.prevOpen = s.prevOpen;
        }
        s.prevOpen = null;
        s.nextOpen = null;
        size--;
        return true;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** A copy of the streams here now. */
    List<RdmaClientStream> snapshot() {
        List<RdmaClientStream> out = new ArrayList<>(size);
        for (RdmaClientStream s = head; s != null; s = s.nextOpen) {
            out.add(s);
        }
        return out;
    }
}
