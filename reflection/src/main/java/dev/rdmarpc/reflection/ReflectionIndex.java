package dev.rdmarpc.reflection;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.protobuf.ProtoFileDescriptorSupplier;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What reflection knows of one server: the services whose definitions carry a proto schema (as generated services do),
 * and every .proto file they are defined in or depend on, by file name, by the symbols they declare and by the
 * extensions they declare. Immutable once built.
 */
final class ReflectionIndex {
    private final List<String> serviceNames = new ArrayList<>();
    private final Map<String, FileDescriptor> filesByName = new HashMap<>();
    private final Map<String, FileDescriptor> filesBySymbol = new HashMap<>();
    /** The full names of every message type of the files. */
    private final Set<String> messageTypes = new HashSet<>();
    /** Per extended message type: extension number to the file declaring the extension, in number order. */
    private final Map<String, Map<Integer, FileDescriptor>> extensionsByType = new HashMap<>();
    /** The services the index was built from, to tell whether it still describes a server. */
    private final List<ServiceDefinition> source;

    ReflectionIndex(List<ServiceDefinition> services) {
        this.source = services;
        Deque<FileDescriptor> toVisit = new ArrayDeque<>();
        for (ServiceDefinition s : services) {
            if (s.getSchemaDescriptor() instanceof ProtoFileDescriptorSupplier schema) {
                serviceNames.add(s.getServiceName());
                toVisit.add(schema.getFileDescriptor());
            }
        }
        while (!toVisit.isEmpty()) {
            FileDescriptor file = toVisit.poll();
            if (filesByName.putIfAbsent(file.getName(), file) == null) {
                addSymbols(file);
                toVisit.addAll(file.getDependencies());
            }
        }
    }

    /** Whether this index was built from exactly {@code services} (the same list object). */
    boolean describes(List<ServiceDefinition> services) {
        return source == services;
    }

    /** The fully qualified names of the services that have a proto schema, in the order they were added. */
    List<String> serviceNames() {
        return serviceNames;
    }

    /** The file with this name, or null. */
    FileDescriptor fileByName(String name) {
        return filesByName.get(name);
    }

    /** The file declaring this fully qualified symbol (service, method, message, enum or extension), or null. */
    FileDescriptor fileContainingSymbol(String symbol) {
        return filesBySymbol.get(symbol);
    }

    /** The file declaring extension {@code number} of the message type {@code type}, or null. */
    FileDescriptor fileContainingExtension(String type, int number) {
        Map<Integer, FileDescriptor> extensions = extensionsByType.get(type);
        return extensions == null ? null : extensions.get(number);
    }

    /** The extension numbers of a known message type (empty for one without extensions), or null for an unknown type. */
    List<Integer> extensionNumbers(String type) {
        Map<Integer, FileDescriptor> extensions = extensionsByType.get(type);
        if (extensions != null) {
            return List.copyOf(extensions.keySet());
        }
        return messageTypes.contains(type) ? List.of() : null;
    }

    /** {@code file} followed by every file it depends on, directly or not, each once. */
    static List<FileDescriptor> withDependencies(FileDescriptor file) {
        Set<FileDescriptor> seen = new LinkedHashSet<>();
        Deque<FileDescriptor> toVisit = new ArrayDeque<>(List.of(file));
        while (!toVisit.isEmpty()) {
            FileDescriptor f = toVisit.poll();
            if (seen.add(f)) {
                toVisit.addAll(f.getDependencies());
            }
        }
        return List.copyOf(seen);
    }

    private void addSymbols(FileDescriptor file) {
        for (ServiceDescriptor service : file.getServices()) {
            symbol(service.getFullName(), file);
            for (MethodDescriptor method : service.getMethods()) {
                symbol(method.getFullName(), file);
            }
        }
        for (Descriptor message : file.getMessageTypes()) {
            addMessage(message, file);
        }
        for (EnumDescriptor e : file.getEnumTypes()) {
            symbol(e.getFullName(), file);
        }
        for (FieldDescriptor extension : file.getExtensions()) {
            addExtension(extension, file);
        }
    }

    private void addMessage(Descriptor message, FileDescriptor file) {
        symbol(message.getFullName(), file);
        messageTypes.add(message.getFullName());
        for (Descriptor nested : message.getNestedTypes()) {
            addMessage(nested, file);
        }
        for (EnumDescriptor e : message.getEnumTypes()) {
            symbol(e.getFullName(), file);
        }
        for (FieldDescriptor extension : message.getExtensions()) {
            addExtension(extension, file);
        }
    }

    private void addExtension(FieldDescriptor extension, FileDescriptor file) {
        symbol(extension.getFullName(), file);
        extensionsByType.computeIfAbsent(extension.getContainingType().getFullName(), t -> new TreeMap<>())
                .putIfAbsent(extension.getNumber(), file);
    }

    private void symbol(String fullName, FileDescriptor file) {
        filesBySymbol.putIfAbsent(fullName, file);
    }
}
