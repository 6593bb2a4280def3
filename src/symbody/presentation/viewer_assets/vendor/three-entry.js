export {
  WebGLRenderer, Scene, PerspectiveCamera, Group, Mesh, Color, Vector3, Quaternion, Box3,
  BoxGeometry, CylinderGeometry, SphereGeometry, ConeGeometry, TorusGeometry, PlaneGeometry,
  MeshPhongMaterial, MeshBasicMaterial, LineBasicMaterial, BufferGeometry, BufferAttribute,
  Float32BufferAttribute, Line, LineSegments, AxesHelper, GridHelper, AmbientLight,
  DirectionalLight, HemisphereLight, DoubleSide, FrontSide, SRGBColorSpace, REVISION
} from 'three';
export { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
