package dev.rdmarpc.core;

/** A service implementation that can describe itself; generated {@code ImplBase} classes implement it. */
public interface BindableService {
    ServiceDefinition bindService();
}
