package example.croupier;

import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A table's game service in Java (kafka-clients): publishes the rounds of one Sic Bo table and
 * their confirmed bets to croupier's input topics, keyed by table_id (the default partitioner is
 * murmur2, as croupier expects), acks=all and idempotent, and signs the money-moving round events
 * with the table's Ed25519 key.
 *
 * <pre>
 * java -jar java-publisher.jar -table T [-key FILE] [-rounds N] [-bets N] [-seed N] [-sent FILE]
 *     [-dealer ID] [-shaker ID] [-bootstrap HOST:PORT] [-rounds-topic T] [-bets-topic T]
 *     [-ca-file PEM -user NAME -password-file FILE]
 * java -jar java-publisher.jar sign KEY_FILE TYPE EVENT_ID TABLE ROUND AT DICE REASON AUTHORIZED_BY
 * </pre>
 */
public final class Publisher {
    private Publisher() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("sign")) {
            System.out.println(signOne(args));
            return;
        }
        Map<String, String> flags = flags(args);
        String table = flags.get("table");
        if (table == null) {
            throw new IllegalArgumentException("-table is required");
        }
        PrivateKey key = null;
        if (flags.containsKey("key")) {
            Signing.KeyFile file = Signing.read(Path.of(flags.get("key")));
            if (!table.equals(file.tableId())) {
                throw new IllegalArgumentException(flags.get("key") + " is the key of table "
                        + file.tableId() + ", not " + table);
            }
            key = file.key();
        }
        Tables.Options options = new Tables.Options(table,
                Integer.parseInt(flags.getOrDefault("rounds", "20")),
                Integer.parseInt(flags.getOrDefault("bets", "6")),
                Long.parseLong(flags.getOrDefault("seed", "1")),
                flags.get("dealer"), flags.get("shaker"));
        List<Map<String, Object>> events = Tables.events(options, key);
        List<String> sent = publish(flags, events);
        if (flags.containsKey("sent")) {
            try (BufferedWriter out = Files.newBufferedWriter(Path.of(flags.get("sent")),
                    StandardCharsets.UTF_8)) {
                for (String line : sent) {
                    out.write(line);
                    out.write('\n');
                }
            }
        }
        long signed = events.stream().filter(e -> e.containsKey("sig")).count();
        System.out.printf("{\"table_id\":\"%s\",\"events\":%d,\"signed\":%d}%n",
                table, events.size(), signed);
    }

    /** Sends every event keyed by its table, in order, and waits for every acknowledgement. */
    private static List<String> publish(Map<String, String> flags, List<Map<String, Object>> events)
            throws Exception {
        List<String> sent = new ArrayList<>();
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config(flags))) {
            for (Map<String, Object> event : events) {
                String topic = event.get("type").equals("bet.placed")
                        ? flags.getOrDefault("bets-topic", "bets")
                        : flags.getOrDefault("rounds-topic", "rounds");
                String value = Json.write(event);
                acks.add(producer.send(
                        new ProducerRecord<>(topic, (String) event.get("table_id"), value)));
                sent.add(value);
            }
            producer.flush();
            for (Future<RecordMetadata> ack : acks) {
                ack.get();
            }
        }
        return sent;
    }

    /** The producer's settings: acks=all, idempotent; SASL/SCRAM-SHA-512 over TLS if asked. */
    static Properties config(Map<String, String> flags) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                flags.getOrDefault("bootstrap", "127.0.0.1:9092"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        if (flags.containsKey("user")) {
            String password = Files.readString(Path.of(flags.get("password-file"))).strip();
            p.put("security.protocol", flags.containsKey("ca-file") ? "SASL_SSL" : "SASL_PLAINTEXT");
            p.put("sasl.mechanism", "SCRAM-SHA-512");
            p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule "
                    + "required username=\"" + flags.get("user") + "\" password=\"" + password + "\";");
        } else if (flags.containsKey("ca-file")) {
            p.put("security.protocol", "SSL");
        }
        if (flags.containsKey("ca-file")) {
            p.put("ssl.truststore.type", "PEM");
            p.put("ssl.truststore.location", flags.get("ca-file"));
        }
        return p;
    }

    /** `-name value` pairs. */
    private static Map<String, String> flags(String[] args) {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("-") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected -name value, found " + args[i]);
            }
            flags.put(args[i].replaceFirst("^-+", ""), args[i + 1]);
        }
        return flags;
    }

    /** The sig of one round event given by its fields (dice as 6-5-1, or empty). */
    private static String signOne(String[] args) throws Exception {
        if (args.length != 10) {
            throw new IllegalArgumentException(
                    "sign KEY_FILE TYPE EVENT_ID TABLE ROUND AT DICE REASON AUTHORIZED_BY");
        }
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("type", args[2]);
        event.put("v", 1);
        event.put("event_id", args[3]);
        event.put("table_id", args[4]);
        event.put("round_id", args[5]);
        event.put("at", args[6]);
        List<Integer> dice = new ArrayList<>();
        for (String d : args[7].isEmpty() ? new String[0] : args[7].split("-")) {
            dice.add(Integer.parseInt(d));
        }
        event.put("dice", dice);
        event.put("reason", args[8]);
        event.put("authorized_by", args[9]);
        return Signing.sign(Signing.read(Path.of(args[1])).key(), event);
    }
}
