package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One service as its generated {@code <Service>Rpc} class sees it: the class's names, its rpcs, and how the class
 * writes every other class it names. Building it checks what cannot be generated.
 */
final class ServiceClass {
    /** The class-name suffix of generated service classes. */
    static final String CLASS_SUFFIX = "Rpc";

    /** Parameter, field and local variable names of the generated code: none may begin a qualified name it writes. */
    private static final List<String> VARIABLES = List.of("SERVICE_NAME", "request", "responseObserver", "channel",
            "callOptions", "method", "c", "declared");

    final FileDescriptorProto file;
    final int index;
    final Comments comments;
    final String javaPackage;
    final String className;
    final String serviceName;
    final boolean deprecated;
    final TypeNames names;
    final List<Rpc> rpcs = new ArrayList<>();
    /** Whether a request or response class is deprecated: the class then suppresses deprecation warnings. */
    final boolean usesDeprecatedType;

    ServiceClass(FileDescriptorProto file, int index, MessageTypes types, Comments comments, PluginOptions options) {
        ServiceDescriptorProto service = file.getService(index);
        this.file = file;
        this.index = index;
        this.comments = comments;
        this.javaPackage = JavaNames.javaPackage(file);
        this.className = service.getName() + CLASS_SUFFIX;
        this.serviceName = JavaNames.join(file.getPackage(), service.getName());
        this.deprecated = service.getOptions().getDeprecated();
        if (types.protocClasses(javaPackage).contains(className)) {
            throw error("protoc's Java generator already writes a class " + className + " into "
                    + (javaPackage.isEmpty() ? "the unnamed package" : "package " + javaPackage) + ", the name of the"
                    + " service's generated class; rename the message, enum or java_outer_classname");
        }
        Set<String> members = new HashSet<>(VARIABLES);
        members.add(className);
        members.add(implBase());
        members.add(descriptorSupplier());
        for (String kind : List.of("", "Blocking", "Future")) {
            members.add(stub(kind));
        }
        for (MethodDescriptorProto m : service.getMethodList()) {
            members.add(JavaNames.descriptorGetterName(m.getName()));
        }
        this.names = new TypeNames(members, types.packageClasses(javaPackage));

        Map<String, String> javaNamesSeen = new HashMap<>();
        boolean anyDeprecatedType = false;
        for (int i = 0; i < service.getMethodCount(); i++) {
            MethodDescriptorProto m = service.getMethod(i);
            String javaName = JavaNames.methodName(m.getName());
            String getter = JavaNames.descriptorGetterName(m.getName());
            boolean attachments = options.attachments(file.getName(), serviceName, m.getName());
            requireUnique(javaNamesSeen, javaName, m.getName(), "Java method name");
            if (attachments) {
                requireUnique(javaNamesSeen, Rpc.attachmentName(javaName), m.getName(), "Java method name");
            }
            requireUnique(javaNamesSeen, getter + "()", m.getName(), "descriptor getter");
            MessageTypes.Message request = message(types, m, m.getInputType());
            MessageTypes.Message response = message(types, m, m.getOutputType());
            anyDeprecatedType |= request.deprecated() || response.deprecated();
            rpcs.add(new Rpc(m, i, javaName, getter, write(m, request), write(m, response),
                    m.getOptions().getDeprecated(), attachments));
        }
        this.usesDeprecatedType = anyDeprecatedType;
    }

    private MessageTypes.Message message(MessageTypes types, MethodDescriptorProto rpc, String protoType) {
        MessageTypes.Message message;
        try {
            message = types.message(protoType);
        } catch (CodeGenerationException e) {
            throw error("rpc " + rpc.getName() + ": " + e.getMessage());
        }
        if (message.mapEntry()) {
            throw error("rpc " + rpc.getName() + ": " + protoType + " is the entry type of a map field, which has no Java"
                    + " class; use a message of its own");
        }
        return message;
    }

    private String write(MethodDescriptorProto rpc, MessageTypes.Message message) {
        try {
            return names.of(message.type());
        } catch (CodeGenerationException e) {
            throw error("rpc " + rpc.getName() + ": " + e.getMessage());
        }
    }

    /** An error about this service, naming its file. */
    CodeGenerationException error(String problem) {
        return new CodeGenerationException(file.getName() + ": service " + serviceName + ": " + problem);
    }

    /** Fails when another rpc of the service already maps to {@code javaName}. */
    private void requireUnique(Map<String, String> seen, String javaName, String rpc, String what) {
        String clash = seen.putIfAbsent(javaName, rpc);
        if (clash != null) {
            throw error("rpcs " + clash + " and " + rpc + " both map to the " + what + " " + javaName);
        }
    }

    /** The simple name of a nested stub class: {@code <Service>Stub}, {@code <Service>BlockingStub}, ... */
    String stub(String kind) {
        return file.getService(index).getName() + kind + "Stub";
    }

    /** The simple name of the nested server base class. */
    String implBase() {
        return file.getService(index).getName() + "ImplBase";
    }

    /** The simple name of the nested class giving the service's proto descriptors to server reflection. */
    String descriptorSupplier() {
        return file.getService(index).getName() + "DescriptorSupplier";
    }

    /** Whether any rpc of the service gets attachment methods. */
    boolean hasAttachments() {
        return rpcs.stream().anyMatch(Rpc::attachments);
    }

    /** The call of an rpc's descriptor getter, qualified by the class. */
    String descriptor(Rpc rpc) {
        return className + "." + rpc.getter() + "()";
    }

    /** {@code MethodDescriptor<Req, Resp>} of an rpc. */
    String descriptorType(Rpc rpc) {
        return names.core("MethodDescriptor") + "<" + rpc.request() + ", " + rpc.response() + ">";
    }

    /** {@code StreamObserver<type>}. */
    String observer(String type) {
        return names.core("StreamObserver") + "<" + type + ">";
    }

    /** {@code WithAttachment<type>}. */
    String withAttachment(String type) {
        return names.core("WithAttachment") + "<" + type + ">";
    }

    /** Writes {@code @Deprecated} when {@code deprecated}. */
    void deprecated(SourceWriter w, boolean isDeprecated) {
        if (isDeprecated) {
            w.line("@" + names.lang("Deprecated"));
        }
    }

    /** Writes {@code @Override}. */
    void override(SourceWriter w) {
        w.line("@" + names.lang("Override"));
    }
}
