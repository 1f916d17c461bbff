#!/usr/bin/env python3
"""A slow link without netem: holds every packet of one netfilter queue for a
fixed delay, then lets it go (tools/cluster slow; docs/cluster.md, "Faults").

This machine's kernel has no sch_netem (CONFIG_NET_SCH_NETEM is not set), so
`tc qdisc ... netem delay` is not available. tools/cluster sends a node's
packets, both ways, to an NFQUEUE (iptables, with --queue-bypass: when this
program is gone packets pass undelayed instead of being dropped), and this
program, started inside the node's network namespace, answers each packet's
verdict DELAY seconds after it arrived, in arrival order.

Verdicts are batch verdicts ("accept every packet up to id N"), so a packet
whose notification the kernel could not deliver (a full socket buffer) is
released with the next one instead of staying queued forever.

usage: cluster_delay.py QUEUE DELAY_SECONDS [PID_FILE]
  PID_FILE is written once the queue is bound (tools/cluster waits for it and
  ends the program by it); a queue another program holds is an error.
"""
import collections
import os
import select
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT_BATCH = 0, 2, 3
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = 1, 2, 3, 4, 5
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NFQNL_CFG_CMD_BIND, NFQNL_COPY_META = 1, 1
NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_GSO = 1, 4
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK, NLMSG_ERROR = 1, 4, 2


def attribute(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def message(queue, msg, attributes, seq, flags=NLM_F_REQUEST):
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + b"".join(attributes)
    return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg, flags, seq, 0) + body


def configure(sock, queue):
    flags = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO
    steps = [[attribute(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, socket.AF_INET))],
             [attribute(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META)),
              attribute(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", 65536)),
              attribute(NFQA_CFG_MASK, struct.pack("!I", flags)),
              attribute(NFQA_CFG_FLAGS, struct.pack("!I", flags))]]
    for seq, attrs in enumerate(steps, 1):
        sock.send(message(queue, NFQNL_MSG_CONFIG, attrs, seq, NLM_F_REQUEST | NLM_F_ACK))
        data = sock.recv(65536)
        kind = struct.unpack_from("=IH", data)[1]
        error = struct.unpack_from("=i", data, 16)[0] if kind == NLMSG_ERROR else -1
        if error:
            sys.exit("cluster_delay: binding queue %d failed (netlink error %d: another program holds it?)"
                     % (queue, error))


def packet_ids(data):
    """The packet ids of the queue notifications in one datagram."""
    ids, at = [], 0
    while at + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, at)
        if length < 16:
            break
        if kind == NLMSG_ERROR:
            error = struct.unpack_from("=i", data, at + 16)[0]
            if error:
                sys.exit("cluster_delay: netlink error %d" % error)
        elif kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            pos, end = at + 20, at + length
            while pos + 4 <= end:
                alen, atype = struct.unpack_from("=HH", data, pos)
                if alen < 4:
                    break
                if atype & 0x7fff == NFQA_PACKET_HDR:
                    ids.append(struct.unpack_from("!I", data, pos + 4)[0])
                pos += (alen + 3) & ~3
        at += (length + 3) & ~3
    return ids


def main():
    queue, delay = int(sys.argv[1]), float(sys.argv[2])
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE: bursts of notifications
    sock.bind((0, 0))
    configure(sock, queue)
    if len(sys.argv) > 3:
        with open(sys.argv[3] + ".part", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(sys.argv[3] + ".part", sys.argv[3])
    held = collections.deque()  # (release time, packet id), in arrival order
    seq = 10
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        if select.select([sock], [], [], timeout)[0]:
            try:
                data = sock.recv(1 << 20)
            except OSError:  # ENOBUFS: notifications lost; the next batch verdict releases them
                continue
            now = time.monotonic()
            held.extend((now + delay, packet) for packet in packet_ids(data))
        now, last = time.monotonic(), None
        while held and held[0][0] <= now:
            last = held.popleft()[1]
        if last is not None:
            seq += 1
            sock.send(message(queue, NFQNL_MSG_VERDICT_BATCH,
                              [attribute(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, last))], seq))


if __name__ == "__main__":
    main()
