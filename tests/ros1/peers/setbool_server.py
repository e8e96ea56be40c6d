#!/usr/bin/python3
"""rospy std_srvs/SetBool server for the ROS 1 tests: serves SERVICE, answers data=True with
success True and message "rospy got N" (N counts the calls), data=False with an error (the
handler raises), prints "server: ready" once registered, and for each call "server: call N
data=D" and the fields of the client's connection header beyond a client's own ("extra k=v,..."),
and runs until ended."""
import sys

import rospy
from std_srvs.srv import SetBool, SetBoolResponse


def main() -> int:
    service = sys.argv[1]
    rospy.init_node("rospy_setbool_server", disable_signals=True)
    calls = [0]

    def handle(req):
        calls[0] += 1
        own = ("callerid", "service", "md5sum", "type", "persistent", "probe")
        extra = ",".join(f"{k}={v}" for k, v in sorted(req._connection_header.items()) if k not in own)
        print(f"server: call {calls[0]} data={req.data} extra {extra}", flush=True)
        if not req.data:
            raise rospy.ServiceException("data must be true")
        return SetBoolResponse(success=True, message=f"rospy got {calls[0]}")

    rospy.Service(service, SetBool, handle)
    print("server: ready", flush=True)
    rospy.spin()
    return 0


if __name__ == "__main__":
    sys.exit(main())
