# Pinned base versions (DESIGN.md section 2).  Moving a pin is a deliberate
# commit that also refreshes the *.patch files against the new base.
LINUX_PKG_VERSION := 6.12.117-1~deb12u1
QEMU_SRC_VERSION  := 1:7.2+dfsg-7+deb12u18
