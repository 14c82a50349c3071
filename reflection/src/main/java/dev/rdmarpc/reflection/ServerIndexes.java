package dev.rdmarpc.reflection;

import dev.rdmarpc.core.ServiceDefinition;

import java.util.List;

/**
 * The {@link ReflectionIndex} of the server a reflection service is added to, built on its first call and kept while
 * calls come from the same server (a server's services never change once it is built).
 */
final class ServerIndexes {
    private volatile ReflectionIndex latest;

    /** The index of {@code services}, the list a call's {@code getServerServices()} gave. */
    ReflectionIndex of(List<ServiceDefinition> services) {
        ReflectionIndex index = latest;
        if (index == null || !index.describes(services)) {
            index = new ReflectionIndex(services); // built twice at worst, by racing first calls: each is the same
            latest = index;
        }
        return index;
    }
}
