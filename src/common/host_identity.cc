#include "common/host_identity.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace tagwire {

std::string host_identity() {
  std::ostringstream id;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  id << boot_id;
  struct stat st {};
  if (::stat("/dev/shm", &st) == 0) id << '/' << st.st_dev << ':' << st.st_ino;
  if (::stat("/proc/self/ns/pid", &st) == 0) id << "/pid:" << st.st_ino;
  return id.str();
}

}  // namespace tagwire
