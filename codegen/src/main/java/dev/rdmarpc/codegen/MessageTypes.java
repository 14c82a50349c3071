package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Java class of every message of a set of files, by fully-qualified proto name, with what generated code must
 * know about it (deprecated, a map entry), and the top-level classes the generators write into each Java package.
 */
final class MessageTypes {

    /** A message's Java class; {@code deprecated} when it, a message enclosing it or its file is deprecated. */
    record Message(JavaType type, boolean deprecated, boolean mapEntry) {
    }

    private final Map<String, Message> messages = new HashMap<>();
    private final Map<String, Set<String>> topLevelClasses = new HashMap<>();
    private final Map<String, Set<String>> serviceClasses = new HashMap<>();

    /** Indexes the messages, nested ones included, of these files (a request's files and their imports). */
    MessageTypes(List<FileDescriptorProto> files) {
        for (FileDescriptorProto file : files) {
            String javaPackage = JavaNames.javaPackage(file);
            Set<String> classes = topLevelClasses.computeIfAbsent(javaPackage, p -> new HashSet<>());
            classes.add(JavaNames.outerClassName(file));
            boolean fileDeprecated = file.getOptions().getDeprecated();
            for (DescriptorProto message : file.getMessageTypeList()) {
                String prefix = JavaNames.typePrefix(file, message);
                String inPackage = prefix.equals(javaPackage) ? "" : JavaNames.outerClassName(file);
                add(message, file.getPackage(), javaPackage, inPackage, fileDeprecated);
                if (inPackage.isEmpty()) {
                    classes.add(message.getName());
                }
            }
            for (ServiceDescriptorProto s : file.getServiceList()) {
                Set<String> services = serviceClasses.computeIfAbsent(javaPackage, p -> new HashSet<>());
                services.add(s.getName() + ServiceClass.CLASS_SUFFIX);
                services.add(s.getName() + "Grpc");
            }
            for (EnumDescriptorProto e : file.getEnumTypeList()) {
                if (JavaNames.inOwnFile(file, e.getOptions().getFeatures())) {
                    classes.add(e.getName());
                }
            }
        }
    }

    private void add(DescriptorProto message, String protoScope, String javaPackage, String javaScope, boolean deprecated) {
        String protoName = JavaNames.join(protoScope, message.getName());
        String javaName = JavaNames.join(javaScope, message.getName());
        boolean isDeprecated = deprecated || message.getOptions().getDeprecated();
        messages.put("." + protoName, new Message(new JavaType(javaPackage, javaName), isDeprecated,
                message.getOptions().getMapEntry()));
        for (DescriptorProto nested : message.getNestedTypeList()) {
            add(nested, protoName, javaPackage, javaName, isDeprecated);
        }
    }

    /**
     * The message with this fully-qualified proto name ({@code .example.Outer.Inner}).
     *
     * @throws CodeGenerationException if no file of the request defines it
     */
    Message message(String protoTypeName) {
        Message message = messages.get(protoTypeName);
        if (message == null) {
            throw new CodeGenerationException("message type " + protoTypeName + " is not defined in any file protoc passed");
        }
        return message;
    }

    /** The simple names of the top-level classes protoc's Java generator writes into a Java package (outer classes, messages, enums). */
    Set<String> protocClasses(String javaPackage) {
        return topLevelClasses.getOrDefault(javaPackage, Set.of());
    }

    /** Those and the service classes ours and grpc-java's generator write into the package ({@code <Service>Rpc}, {@code <Service>Grpc}). */
    Set<String> packageClasses(String javaPackage) {
        Set<String> all = new HashSet<>(protocClasses(javaPackage));
        all.addAll(serviceClasses.getOrDefault(javaPackage, Set.of()));
        return all;
    }
}
